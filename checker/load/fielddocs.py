"""What each inventory field means, and its unit: the descriptions editors show
on hover and completion (`checker schema`, yaml-language-server).

One line per field name; `Model.field` where a name means something else in
one model. Units follow from the name's suffix (UNITS), so `capacity_kw` is
in kW wherever it stands. tests/load/test_schema.py checks that every field of
every kind has a description: a new field fails it until it is described here.
The fields themselves, and their checks, are in checker/load/models.py; the
prose is inventories/README.md.
"""

from __future__ import annotations

# Suffix (or whole name) -> unit, longest suffix first where one ends another.
UNITS: tuple[tuple[str, str], ...] = (
    ("_kw_per_it_kw", "kW per kW of IT load"),
    ("_kg_per_m2", "kg/m²"),
    ("_per_kwh", "the facility's currency per kWh"),
    ("_gb_s", "GB/s"),
    ("_tflops", "TFLOPS"),
    ("_kw", "kW"),
    ("_w", "W"),
    ("_v", "V"),
    ("_c", "°C"),
    ("_kg", "kg"),
    ("_m2", "m²"),
    ("_m", "m"),
    ("_kn", "kN"),
    ("_gb", "GB"),
    ("_tb", "TB"),
    ("_pct", "%"),
    ("_days", "days"),
    ("_b", "billions"),
    ("voltage", "V"),
    ("amps", "A"),
    ("gbps", "Gbit/s"),
    ("u_height", "U"),
    ("position", "U"),
    ("max_utilization", "%"),
    ("context_len", "tokens"),
    ("seq_len", "tokens"),
)

# Models whose fields (min, max, typical) are in the unit their parent field names.
MODEL_UNITS = {"PowerDraw": "W", "InputVoltage": "V", "InletRange": "°C"}


def unit(name: str, model: str | None = None) -> str | None:
    if model in MODEL_UNITS:
        return MODEL_UNITS[model]
    for suffix, found in UNITS:
        if name == suffix or name.endswith(suffix):
            return found
    return None


DESCRIPTIONS: dict[str, str] = {
    # ------------------------------------------------ every kind
    "kind": "what the document holds: Facility, Servers, Workloads, Waivers, GpuModels, ServerModels"
    " or LanguageModels",
    "name": "its name, unique among its kind; 1-200 characters, no spaces or '/' (it is part of entity ids)",
    "description": "a human-readable description",
    "notes": "free text for people; read by no check",
    "vendor": "the maker",
    "source": "where the figures come from (a URL or document)",
    "verified": "whether the figures were checked against the source",
    "unverified": "the fields whose figures are not yet checked against the source",
    # ------------------------------------------------ Facility
    "Facility.location": "where the site is (free text)",
    "altitude_m": "the site's elevation above sea level: ASHRAE's allowable inlet maxima drop with it",
    "currency": "the currency of energy_price_per_kwh (e.g. EUR)",
    "design_pue": "the PUE the site was designed for (total facility power / IT power)",
    "pue_target": "the PUE the rollout must stay within",
    "pue_model": "how the PUE is projected: fixed load, cooling per IT kW and losses",
    "energy_price_per_kwh": "the price of energy, for the yearly cost",
    "floor_max_kg_per_m2": "the raised floor's distributed load rating",
    "floor_concentrated_kn": "the floor panel's concentrated load rating (one caster or foot of a standing"
    " rack)",
    "floor_rolling_kn": "the floor panel's rolling load rating (a caster while a rack is moved in)",
    "Facility.power": "the facility's power: UPS capacity or blocks, utility feed, generators",
    "Facility.cooling": "the room's cooling plant, air handlers and facility water",
    "racks": "the racks, each with its feeds",
    "cdus": "coolant distribution units and the racks or rows they serve",
    # FacilityPower
    "it_capacity_kw": "the UPS capacity peak IT load is checked against (or give `ups` blocks, not both)",
    "ups": "the UPS as blocks, with its redundancy",
    "Feed.ups": "the facility UPS block this feed is on (power.ups)",
    "utility_kw": "the utility supply for the whole site (IT, cooling and losses)",
    "generators": "standby generators that carry the site while the utility is out",
    "basis": "which server draw the site's load is figured at: max (nameplate peak) or typical",
    "average_load_pct": "the IT load the site runs at over a year, as a share of its peak:"
    " annual PUE, energy and cost are figured at it (ISO/IEC 30134-2)",
    "blocks": "the UPS blocks (systems)",
    "reserve": "a catcher design's reserve block, which takes over a failed block's load",
    "mechanical_kw": "cooling load that rides this UPS block (CDU and chilled-water pumps)",
    "mechanical_transfer_to": "the block that cooling load moves to when this block fails (a static transfer"
    " switch or the pumps' second cord)",
    "mechanical_redundant": "other pumps, on other blocks, carry the whole flow when this block fails",
    "count": "how many",
    "Generators.capacity_kw": "each generator's rating, as the site runs them",
    "redundancy": "N: all of it is needed; N+1: any one unit may fail; 2N: half may fail",
    "Ups.redundancy": "N, one system; N+1, modules on one bus; 2N, system plus system; distributed,"
    " block redundant; catcher, a reserve block backs the others",
    "Rack.redundancy": "N: the feeds add up; N+1: any one feed may fail; 2N: either side (A/B) may fail",
    # FacilityCooling, RoomAir, CoolingUnit, Cdu
    "capacity_kw": "its capacity",
    "FacilityCooling.capacity_kw": "the plant's heat rejection with every unit running (with a list of units,"
    " their sum)",
    "UpsBlock.capacity_kw": "the block's output rating",
    "Cdu.capacity_kw": "the heat it moves to facility water with every unit running",
    "RoomAir.capacity_kw": "the air handlers' capacity with every unit running",
    "units": "how many equal units share it",
    "FacilityCooling.units": "a count of equal units, or each unit with its own name and capacity",
    "delta_t_c": "the air's temperature rise across the servers, for airflow figures; typically 11-14",
    "inlet_c": "the air temperature at the server inlets",
    "ServerModel.inlet_c": "the inlet air temperatures the server is rated for",
    "Server.inlet_c": "the inlet air temperatures the server is rated for",
    "ashrae_class": "the room's ASHRAE TC 9.9 air-cooling class (A1-A4)",
    "water_class": "the facility water's ASHRAE liquid-cooling class (W17-W45, W+)",
    "water_supply_c": "the facility water's design supply temperature",
    "room_air": "the air handlers, where the hall's air side is sized on its own",
    "Cdu.racks": "the racks it serves, by name",
    "Cdu.rows": "the rows it serves, by name (Rack.row)",
    # PueModel
    "fixed_kw": "load that does not grow with IT (lights, offices, security)",
    "cooling_kw_per_it_kw": "cooling power for each kW of IT load",
    "loss_fraction": "the share of power lost in distribution (UPS, transformers), 0-1",
    # Rack, Feed, Ats
    "u_height": "its height",
    "weight_kg": "its weight",
    "Rack.weight_kg": "the empty rack's weight",
    "max_weight_kg": "the most the rack may carry, with its servers",
    "footprint_m2": "the floor area it stands on (default: a 600 x 1200 mm rack)",
    "Rack.cooling": "how the rack is cooled: air, rear-door heat exchanger or liquid",
    "cooling_kw": "the cooling the rack has (its rear door or in-row share)",
    "feeds": "the power feeds",
    "Psu.feeds": "PSUs cabled to each feed of the rack, by feed name (they add up to count)",
    "ats": "automatic transfer switches for single-corded devices",
    "psu_order": "how servers without psu.feeds are cabled: PSU 1 to the first feed (or ATS) named,"
    " PSU 2 to the second, and round again",
    "row": "the row the rack stands in (a CDU may serve whole rows)",
    "side": "the feed's side, A or B (2N racks)",
    "voltage": "the feed's voltage (line to line for three-phase)",
    "amps": "the breaker rating",
    "Ats.amps": "the switch's rating, at the primary feed's voltage",
    "phase": "1 for a single-phase feed, 3 for three-phase",
    "Psu.phase": "1: each PSU is a single-phase load on one line (or line pair); 3: each takes"
    " three-phase input",
    "max_utilization": "the share of the breaker a feed may carry continuously (NEC 210.20(A): 80)",
    "power_factor": "real over apparent power, 0-1 (1: figures in kW equal kVA)",
    "primary": "the feed the switch draws from normally",
    "secondary": "the feed it draws from while the primary is down",
    # ------------------------------------------------ Servers
    "facility": "the facility whose racks these servers stand in",
    "rollout_date": "when the servers go into service (YYYY-MM-DD): support must cover it",
    "defaults": "fields every server of this document gets unless it sets them",
    "servers": "the servers",
    "ServerModelsDoc.servers": "the server models",
    "model": "the ServerModels catalog entry it is: its figures fill the fields it leaves out",
    "Workload.model": "a LanguageModels catalog entry whose shape (layers, heads) the workload takes",
    "GpuRef.model": "the GPU model (a GpuModels name, e.g. H100-SXM)",
    "Cpu.model": "the CPU model",
    "rack": "the rack it stands in",
    "position": "the lowest unit it occupies; without it (and without u_height) it takes no U",
    "power_cap_w": "an enforced, persistent cap on wall draw (BMC / Redfish capping or a power-shelf"
    " policy); it stands in for power_w.max",
    "power_w": "the power it draws at the wall",
    "max": "the highest",
    "min": "the lowest",
    "PowerDraw.max": "peak (nameplate) draw, what breakers and feeds are sized for",
    "PowerDraw.typical": "typical draw, for energy and PUE",
    "InputVoltage.min": "the lowest AC input the PSUs are rated for",
    "InputVoltage.max": "the highest AC input the PSUs are rated for",
    "InletRange.min": "the lowest inlet temperature",
    "InletRange.max": "the highest inlet temperature",
    "psu": "its power supplies and how they are cabled",
    "Psu.count": "how many PSUs",
    "rating_w": "each PSU's output rating",
    "redundant": "how many of the PSUs are redundant: the others must carry peak draw (power.psu-redundancy)",
    "efficiency": "the PSUs' 80 PLUS efficiency class: bronze, silver, gold, platinum or titanium",
    "input_v": "the AC input range the PSUs are rated for (power.psu-input-voltage)",
    "per_side": "PSUs cabled to each side of a 2N rack (default: half of count)",
    "cooling": "how it is cooled: air or liquid",
    "liquid_fraction": "the share of its heat that goes to liquid, 0-1 (needs cooling: liquid)",
    "max_coolant_supply_c": "the warmest coolant supply it is rated for",
    "gpu": "its GPUs: model and count",
    "GpuRef.count": "GPUs per server (per tray of a rack-scale system)",
    "cpu": "its CPUs",
    "arch": "the instruction set (x86_64, aarch64): framework builds differ",
    "sockets": "CPU sockets",
    "pcie_lanes": "PCIe lanes per CPU",
    "memory_gb": "memory",
    "ServerModel.memory_gb": "host memory (RAM)",
    "Server.memory_gb": "host memory (RAM)",
    "GpuModel.memory_gb": "memory per GPU",
    "storage": "its local storage",
    "nvme_tb": "local NVMe capacity",
    "raid": "the RAID level of the local storage",
    "scratch": "the local NVMe is a scratch or cache tier, so it needs no RAID",
    "network": "its network: fabric, ports, speed, NVLink",
    "fabric": "the network fabric (InfiniBand, Ethernet, RoCE)",
    "ports": "network ports for the GPU fabric",
    "gbps": "speed of each port",
    "nvlink": "whether its GPUs are joined by NVLink",
    "nvlink_bridge": "GPUs one NVLink bridge joins on this server (H200 NVL: 2 or 4)",
    "nvlink_domain": "GPUs in one NVLink domain where it spans nodes (a GB200 NVL72: 72)",
    "trays": "compute trays of a rack-scale system: the nodes software and workloads see",
    "busbar_w": "the DC busbar's rating, checked against peak draw",
    "gpu_options": "the GPU boards the model takes; another GPU contradicts the server model",
    "software": "what the server runs: OS, driver, CUDA or ROCm, frameworks, containers",
    "os": "the operating system",
    "driver": "the GPU driver version (e.g. 550.54.14)",
    "cuda": "the CUDA toolkit version on the host",
    "rocm": "the ROCm version on the host",
    "cudnn": "the host's cuDNN version",
    "nccl": "the host's NCCL version",
    "frameworks": "framework -> version (2.9.1+cu126, PyPI's wheels) or {version, source}",
    "FrameworkInstall.version": "the framework's version (2.9.1+cu126)",
    "FrameworkInstall.source": "where the build comes from: pypi, conda-forge, container or vendor",
    "image": "the image reference: [registry/]name[:tag][@sha256:digest]",
    "Container.cuda": "the CUDA the image brings (where the built-in tables do not know the image)",
    "Container.cudnn": "the cuDNN the image brings",
    "Container.nccl": "the NCCL the image brings",
    "containers": "container images it runs (they bring their own CUDA; the host needs the driver)",
    "support": "its vendor support contract",
    "Support.vendor": "who provides the support",
    "level": "the response the contract gives: 24x7, 8x5, nbd (next business day) or none",
    "until": "the day the contract ends (YYYY-MM-DD)",
    "workload": "the workload it runs (a Workloads name)",
    # ------------------------------------------------ GpuModels
    "gpus": "the GPU models",
    "GpuModel.vendor": "NVIDIA or AMD",
    "architecture": "the GPU architecture (Hopper, Blackwell, CDNA 3)",
    "compute_capability": "NVIDIA's compute capability (9.0 for Hopper)",
    "llvm_target": "AMD's LLVM target (gfx942 for MI300X)",
    "form_factor": "SXM, PCIe, OAM or the like",
    "tdp_w": "its board power",
    "fp16_tflops": "dense FP16 peak",
    "bf16_tflops": "dense BF16 peak",
    "fp8_tflops": "dense FP8 peak",
    "interconnect": "its GPU-to-GPU link (NVLink 4, Infinity Fabric)",
    "interconnect_gb_s": "its GPU-to-GPU bandwidth",
    "link_domain": "the most GPUs one fast link joins (MI300X: 8)",
    "bridge_ways": "GPUs one NVLink bridge joins (2-way, 4-way), where the source gives them",
    "logical_gpus": "GPUs software sees per package (an MI250X is two)",
    "min_cuda": "the first CUDA release that supports it",
    "cuda_dropped": "the first CUDA release without support for it",
    "min_driver": "the lowest driver it needs, where more than its CUDA needs",
    "last_driver_branch": "the last driver branch that supports it",
    "min_rocm": "the first ROCm release that supports it",
    "forward_compatible": "CUDA forward compatibility (cuda-compat) works on it",
    # ------------------------------------------------ Workloads, LanguageModels
    "workloads": "the workloads",
    "models": "the language models",
    "task": "training, fine-tuning or inference",
    "params_b": "its parameters",
    "active_params_b": "parameters used per token (a mixture of experts)",
    "precision": "the weights' precision (mxfp8 / nvfp4: Blackwell's block-scaled formats)",
    "framework": "the framework it runs on (a Software.frameworks name)",
    "dataset_tb": "its dataset",
    "tokens_b": "training tokens",
    "deadline_days": "the time training must finish in",
    "mode": "training and fine-tuning: all parameters (full, the default), or adapters on a frozen bf16"
    " base (lora) or a 4-bit base (qlora)",
    "layers": "transformer layers",
    "hidden_size": "the model's hidden (embedding) width",
    "kv_heads": "key/value heads per layer",
    "head_dim": "width of each attention head",
    "kv_elements": "elements cached per token and layer where attention compresses keys and values"
    " (DeepSeek MLA); otherwise 2 x kv_heads x head_dim",
    "seq_len": "training: tokens per sequence",
    "micro_batch": "sequences per GPU per step (default 1)",
    "context_len": "inference: tokens per session (prompt and output)",
    "concurrency": "inference: sessions served at once (default 1)",
    "kv_precision": "the KV cache's precision (default 16-bit)",
    "tensor_parallel": "inference: GPUs one model instance spans by tensor parallelism (x pipeline_parallel)",
    "pipeline_parallel": "inference: pipeline stages one model instance spans (x tensor_parallel)",
    # ------------------------------------------------ Waivers
    "waivers": "the waivers",
    "rule": "the rule id it silences, or a glob (power.rack-*)",
    "entity": "the entity id it silences the rule on, or a glob (rack/sh1/A0*)",
    "reason": "why the finding is accepted",
    "owner": "who answers for it",
    "expires": "the day it ends (YYYY-MM-DD): expired, it is an error",
}


def describe(model: str | None, field: str) -> str | None:
    """The description of `field` of `model`, with its unit, if it has one."""
    text = DESCRIPTIONS.get(f"{model}.{field}") or DESCRIPTIONS.get(field)
    if text is None:
        return None
    found = unit(field, model)
    return f"{text} ({found})" if found else text
