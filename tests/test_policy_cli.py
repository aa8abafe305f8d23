"""Policy thresholds in checker.yaml (issue #24 item 6): they reach the rules,
are validated with their position, and `checker explain` shows them."""

from __future__ import annotations

from tests.conftest import AS_OF, CliRunner, Writer, summary

# 5,000 W in the minimal 2N rack of 5.888 kW a side: 84.9 %.
SERVERS = """\
kind: Servers
facility: f1
servers:
  - name: s1
    rack: R01
    position: 1
    u_height: 2
    power_w: {max: 5000}
    support: {vendor: Acme, level: 24x7, until: 2030-12-31}
"""

HEADROOM = ("servers.yaml", SERVERS)


def test_headroom_is_a_setting(cli: CliRunner, workdir: Writer) -> None:
    workdir(*HEADROOM, minimal=("facility",))
    assert cli("audit", ".", *AS_OF, "--fail-on", "warning").code == 0
    workdir("checker.yaml", "headroom_pct: 20\n")
    run = cli("audit", ".", *AS_OF, "--select", "power.rack-headroom")
    assert (run.code, run.lines) == (0, [
        "facility.yaml:12:5: warning power.rack-headroom rack f1/R01 runs at 84.9 % of its 5.9 kW 2N "
        "capacity (0.89 kW headroom): after a side fails the other side carries 5 kW",
        summary(warning=1, verdict="pass"),
    ])


def test_a_bad_threshold_is_a_located_error(cli: CliRunner, workdir: Writer) -> None:
    workdir(*HEADROOM, minimal=("facility",))
    workdir("checker.yaml", "headroom_pct: 100\n")
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.err) == (
        2, "checker.yaml:1:15: headroom_pct: Input should be less than 100 (got 100)\n")


def test_explain_shows_the_settings_a_rule_reads(cli: CliRunner, workdir: Writer) -> None:
    run = cli("explain", "workload-fit.host-memory-large-model")
    default = "  setting: large_model_params_b = 1 (default; set large_model_params_b in checker.yaml)"
    assert default in run.lines
    workdir("checker.yaml", "fail_on: error\nlarge_model_params_b: 13\n")
    run = cli("explain", "workload-fit.gpu-count-large-model", "--config", "checker.yaml")
    assert "  setting: large_model_params_b = 13 (checker.yaml:2:1)" in run.lines
    assert not [line for line in cli("explain", "power.rack-capacity").lines if "setting:" in line]


SUPPORT = """\
kind: Servers
facility: f1
defaults: {rack: R01, power_w: {max: 1000}, gpu: {model: l4, count: 1}}
servers:
  - {name: s1, position: 1, u_height: 1, support: {vendor: Acme, level: 8x5, until: 2030-12-31}}
  - {name: s2, position: 2, u_height: 1, support: {vendor: Acme, level: nbd, until: 2030-12-31}}
"""


def test_expected_support_level_is_a_setting(cli: CliRunner, workdir: Writer) -> None:
    workdir("servers.yaml", SUPPORT, minimal=("facility",))
    run = cli("audit", ".", *AS_OF, "--select", "support.*")
    assert run.lines == [
        "servers.yaml:5:66: warning support.level-24x7 server s1 has 8x5 support; the rollout expects 24x7",
        "servers.yaml:6:66: warning support.level-24x7 server s2 has nbd support; the rollout expects 24x7",
        summary(warning=2, verdict="pass"),
    ]
    workdir("checker.yaml", "support_level: 8x5\n")
    run = cli("audit", ".", *AS_OF, "--select", "support.*")
    assert run.lines == [
        "servers.yaml:6:66: warning support.level-24x7 server s2 has nbd support; the rollout expects 8x5",
        summary(warning=1, verdict="pass"),
    ]
    run = cli("explain", "support.level-24x7")
    assert "  setting: support_level = 8x5 (checker.yaml:1:1)" in run.lines
    workdir("checker.yaml", "support_level: 9x5\n")
    assert cli("audit", ".", *AS_OF).code == 2
