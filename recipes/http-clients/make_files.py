"""Make the test API's files: a certificate for 127.0.0.1 (trustme) and the response bodies.

Usage: python make_files.py WORKDIR

WORKDIR gets ca.pem (what the clients trust), server.pem (key and certificate for nginx),
and www/: ping ("pong"), bigger.json (a fixed JSON document), length/N (N random bytes, made
once here and then served from disk for every request).
"""

import os
import shutil
import sys
from pathlib import Path

import trustme

SIZES = (4, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)

workdir = Path(sys.argv[1])
authority = trustme.CA()
authority.cert_pem.write_to_path(str(workdir / "ca.pem"))
server = authority.issue_cert("127.0.0.1")
server.private_key_and_cert_chain_pem.write_to_path(str(workdir / "server.pem"))

www = workdir / "www"
(www / "length").mkdir(parents=True)
(www / "ping").write_text("pong")
shutil.copy(Path(__file__).with_name("bigger.json"), www / "bigger.json")
for size in SIZES:
    (www / "length" / str(size)).write_bytes(os.urandom(size))
