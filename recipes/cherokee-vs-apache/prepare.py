"""Make a web server's files in its work directory: the 67,859-byte static page and the feed's database.

Usage: python prepare.py WORKDIR
"""

import base64
import random
import subprocess
import sys
from pathlib import Path

STATIC_BYTES = 67859  # the size of the original's static file

workdir = Path(sys.argv[1])
(workdir / "www").mkdir(exist_ok=True)
text = base64.encodebytes(random.Random(67859).randbytes(STATIC_BYTES)).decode()  # the same page every run
(workdir / "www" / "static.html").write_text(text[:STATIC_BYTES])
subprocess.run([sys.executable, "-m", "feedsite.make_db", str(workdir / "feed.sqlite3")], check=True)
