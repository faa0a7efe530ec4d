"""Cells for CSV files teachers open in a spreadsheet."""

from __future__ import annotations

# A cell starting with one of these is read as a formula (=HYPERLINK(...), +cmd, -2+3, @SUM) by
# Excel, LibreOffice and Sheets; a tab or carriage return can hide one after a delimiter.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """Text that a spreadsheet would run as a formula gets a leading apostrophe; numbers pass as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value
