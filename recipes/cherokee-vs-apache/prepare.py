"""Make a web server's files in its work directory: the 67,859-byte static page and the feed's database.

Usage: python prepare.py WORKDIR [--cherokee-mime-types]

--cherokee-mime-types also writes WORKDIR/cherokee-mime.conf: the system's MIME table
(/etc/mime.types, which Apache and lighttpd load too) in Cherokee's configuration syntax.
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

if "--cherokee-mime-types" in sys.argv[2:]:
    lines = []
    for line in Path("/etc/mime.types").read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) > 1:
            lines.append(f"mime!{fields[0]}!extensions = {','.join(fields[1:])}")
    (workdir / "cherokee-mime.conf").write_text("\n".join(lines) + "\n")
