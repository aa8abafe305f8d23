"""`checker import SOURCE`: a plan kept elsewhere (NetBox, the NetBox device-type
library, spreadsheets) as inventory YAML. One module per source, one table (IMPORTERS):
the CLI's `import` subcommands are made from it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from checker.importers import csvfile, devicetypes, netbox


@dataclass(frozen=True)
class Importer:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    # The exit code and the lines to print.
    run: Callable[[argparse.Namespace], tuple[int, list[str]]]


IMPORTERS: tuple[Importer, ...] = (
    Importer("netbox", "sites, racks, feeds, devices and device types from NetBox's API",
             netbox.add_arguments, netbox.run),
    Importer("devicetypes", "server models from NetBox device-type library files",
             devicetypes.add_arguments, devicetypes.run),
    Importer("csv", "racks, feeds and servers from spreadsheet (CSV) exports",
             csvfile.add_arguments, csvfile.run),
)
