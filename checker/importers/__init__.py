"""`checker import SOURCE`: a plan kept elsewhere (NetBox, the NetBox device-type
library, spreadsheets) as inventory YAML. One module per source, one table (IMPORTERS):
the CLI's `import` subcommands are made from it.

A row names its module, imported when that source is imported from (or its
arguments are shown): no other command imports an importer."""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Importer:
    name: str
    help: str
    module: str  # checker.importers.<module>: add_arguments(parser) and run(args)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        importlib.import_module(f"checker.importers.{self.module}").add_arguments(parser)

    def run(self, args: argparse.Namespace) -> tuple[int, list[str]]:
        """The exit code and the lines to print."""
        code, lines = importlib.import_module(f"checker.importers.{self.module}").run(args)
        return int(code), list(lines)


IMPORTERS: tuple[Importer, ...] = (
    Importer("netbox", "sites, racks, feeds, devices and device types from NetBox's API", "netbox"),
    Importer("devicetypes", "server models from NetBox device-type library files", "devicetypes"),
    Importer("csv", "racks, feeds and servers from spreadsheet (CSV) exports", "csvfile"),
)
