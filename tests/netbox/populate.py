"""Populate a NetBox with the small test sites that `checker import netbox` is tested on.

    NETBOX_URL=http://127.0.0.1:8000 NETBOX_TOKEN=... python tools/netbox/populate.py

Needs `pynetbox` and an empty NetBox 4.x (it creates; it does not update). The sites are
built to give known findings (tests/importers/test_netbox.py):

- fra1 (Frankfurt): R01, two DGX H100 (10.2 kW each) on 400 V 63 A three-phase feeds, one DGX
  cabled PSU by PSU to two PDUs (PDU outlets on legs A/B/C, PDU inlets on the feeds);
  R02, one DGX on 400 V 16 A feeds: NetBox sums both feeds (17.7 kW for 10.2 kW), but
  one side is 8.9 kW, so the rack overloads when a side fails; two of its PSUs are
  cabled straight to the feeds, four are not cabled;
  R03 (planned), 4U GPU servers on 230 V 32 A single-phase feeds: the active one fits
  (4 of 5.9 kW a side), the planned one makes it 8 kW; an offline one is not imported.
  A patch panel (no power ports) and an unracked spare.
- ber1 (Berlin): B01, one feed only (N), weights in pounds, one 4U server.
Device custom fields gpu_model, gpu_count, support_level and support_until (a date) hold
the GPUs and the support contract of the active servers (checker.yaml `netbox.custom_fields`).
"""

from __future__ import annotations

import os

import pynetbox


def main() -> None:
    nb = pynetbox.api(os.environ["NETBOX_URL"], token=os.environ["NETBOX_TOKEN"])
    dcim = nb.dcim
    for name, kind in (("gpu_model", "text"), ("gpu_count", "integer"), ("support_level", "text"),
                       ("support_until", "date")):
        nb.extras.custom_fields.create(name=name, type=kind, object_types=["dcim.device"])
    dgx_cf = {"gpu_model": "h100-sxm-80gb", "gpu_count": 8, "support_level": "24x7",
              "support_until": "2029-12-31"}
    l40s_cf = {"gpu_model": "l40s", "gpu_count": 8, "support_level": "nbd", "support_until": "2028-06-30"}

    nvidia = dcim.manufacturers.create(name="NVIDIA", slug="nvidia")
    smc = dcim.manufacturers.create(name="Supermicro", slug="supermicro")
    raritan = dcim.manufacturers.create(name="Raritan", slug="raritan")
    generic = dcim.manufacturers.create(name="Generic", slug="generic")

    dgx = dcim.device_types.create(
        manufacturer=nvidia.id, model="DGX H100", slug="dgx-h100", u_height=8,
        weight=130.45, weight_unit="kg", is_full_depth=True,
    )
    for i in range(1, 7):
        dcim.power_port_templates.create(
            device_type=dgx.id, name=f"PSU{i}", type="iec-60320-c20", maximum_draw=1700, allocated_draw=1400
        )
    gpu4u = dcim.device_types.create(
        manufacturer=smc.id, model="AS-4125GS-TNRT", slug="as-4125gs-tnrt", u_height=4,
        weight=99.2, weight_unit="lb",
    )
    for i in range(1, 5):
        dcim.power_port_templates.create(
            device_type=gpu4u.id, name=f"PSU{i}", type="iec-60320-c14", maximum_draw=1000, allocated_draw=750
        )
    pdu = dcim.device_types.create(manufacturer=raritan.id, model="PX3-5190R", slug="px3-5190r", u_height=0)
    inlet = dcim.power_port_templates.create(device_type=pdu.id, name="Inlet", type="iec-60309-3p-n-e-6h")
    for i in range(1, 13):
        dcim.power_outlet_templates.create(
            device_type=pdu.id, name=f"Outlet{i}", type="iec-60320-c19", power_port=inlet.id,
            feed_leg="ABC"[(i - 1) % 3],
        )
    patch = dcim.device_types.create(
        manufacturer=generic.id, model="Patch panel 24p", slug="patch-24p", u_height=1
    )

    role_gpu = dcim.device_roles.create(name="GPU server", slug="gpu-server", color="00aa00")
    role_pdu = dcim.device_roles.create(name="PDU", slug="pdu", color="aa0000")
    role_net = dcim.device_roles.create(name="Patching", slug="patching", color="0000aa")

    fra1 = dcim.sites.create(name="Frankfurt 1", slug="fra1", status="active", time_zone="Europe/Berlin")
    ber1 = dcim.sites.create(name="Berlin 1", slug="ber1", status="planned")

    racks = {}
    for name, status in (("R01", "active"), ("R02", "active"), ("R03", "planned")):
        racks[name] = dcim.racks.create(
            name=name, site=fra1.id, status=status, u_height=42, weight=120, max_weight=1500, weight_unit="kg"
        )
    b01 = dcim.racks.create(name="B01", site=ber1.id, status="active", u_height=42, weight=265,
                            max_weight=2000, weight_unit="lb")

    pp1 = dcim.power_panels.create(site=fra1.id, name="PP-1")
    pp2 = dcim.power_panels.create(site=ber1.id, name="PP-B")
    feeds = {}
    for rack, volts, amps, phase in (("R01", 400, 63, "three-phase"), ("R02", 400, 16, "three-phase"),
                                     ("R03", 230, 32, "single-phase")):
        for side, kind in (("A", "primary"), ("B", "redundant")):
            feeds[f"{rack}-{side}"] = dcim.power_feeds.create(
                power_panel=pp1.id, rack=racks[rack].id, name=f"{rack}-{side}", status="active", type=kind,
                supply="ac", phase=phase, voltage=volts, amperage=amps, max_utilization=80,
            )
    dcim.power_feeds.create(
        power_panel=pp2.id, rack=b01.id, name="B01-A", status="active", type="primary",
        supply="ac", phase="single-phase", voltage=230, amperage=32, max_utilization=80,
    )

    def device(name: str, dtype: object, role: object, site: object, rack: object = None,
               position: float | None = None, status: str = "active", face: str | None = "front",
               cf: dict[str, object] | None = None) -> object:
        fields = {"name": name, "device_type": dtype.id, "role": role.id, "site": site.id, "status": status}
        if cf:
            fields["custom_fields"] = cf
        if rack is not None:
            fields["rack"] = rack.id
        if position is not None:
            fields.update(position=position, face=face)
        return dcim.devices.create(**fields)

    def ports(dev: object, kind: str = "power_ports") -> dict[str, object]:
        return {p.name: p for p in getattr(dcim, kind).filter(device_id=dev.id)}

    def cable(a_type: str, a_id: int, b_type: str, b_id: int) -> None:
        nb.dcim.cables.create(
            a_terminations=[{"object_type": a_type, "object_id": a_id}],
            b_terminations=[{"object_type": b_type, "object_id": b_id}],
            status="connected",
        )

    # fra1 R01: two PDUs on the feeds, DGX 1 cabled through them, DGX 2 not cabled.
    pdus = {}
    for side in "AB":
        pdus[side] = device(f"fra1-r01-pdu-{side.lower()}", pdu, role_pdu, fra1, racks["R01"])
        cable("dcim.powerport", ports(pdus[side])["Inlet"].id, "dcim.powerfeed", feeds[f"R01-{side}"].id)
    dgx1 = device("fra1-r01-dgx1", dgx, role_gpu, fra1, racks["R01"], 1, cf=dgx_cf)
    device("fra1-r01-dgx2", dgx, role_gpu, fra1, racks["R01"], 9, cf=dgx_cf)
    device("fra1-r01-patch", patch, role_net, fra1, racks["R01"], 42)
    psus = ports(dgx1)
    for i in range(1, 7):
        side = "A" if i <= 3 else "B"
        outlet = ports(pdus[side], "power_outlets")[f"Outlet{(i - 1) % 3 + 1}"]
        cable("dcim.powerport", psus[f"PSU{i}"].id, "dcim.poweroutlet", outlet.id)

    # fra1 R02: one DGX on 16 A feeds, PSU1 and PSU2 straight on the feeds.
    dgx3 = device("fra1-r02-dgx3", dgx, role_gpu, fra1, racks["R02"], 1, cf=dgx_cf)
    psus = ports(dgx3)
    cable("dcim.powerport", psus["PSU1"].id, "dcim.powerfeed", feeds["R02-A"].id)
    cable("dcim.powerport", psus["PSU2"].id, "dcim.powerfeed", feeds["R02-B"].id)

    # fra1 R03 (planned rack): active, planned and offline GPU servers; an unracked spare.
    device("fra1-r03-gpu1", gpu4u, role_gpu, fra1, racks["R03"], 1, cf=l40s_cf)
    device("fra1-r03-gpu2", gpu4u, role_gpu, fra1, racks["R03"], 5, status="planned")
    device("fra1-r03-gpu3", gpu4u, role_gpu, fra1, racks["R03"], 9, status="offline")
    device("fra1-spare-1", gpu4u, role_gpu, fra1, status="inventory")

    # ber1 B01: one single-phase feed, one server.
    device("ber1-b01-gpu1", gpu4u, role_gpu, ber1, b01, 10, cf=l40s_cf)
    print("populated: sites fra1, ber1")


if __name__ == "__main__":
    main()
