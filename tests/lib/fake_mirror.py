"""A mirror of NVIDIA's redist folder holding the fake cuDNN builds the
build makes (CUDNNCTL_FAKE_DIR), packed as releases no manifest of NVIDIA's
names, served over HTTPS with its own CA (cudnnctl takes manifests only
over HTTPS or from a folder).  For the tests that install by version with
the real binary: tests/ansible, tests/action.  Given that binary, the
mirror served is a site `cudnnctl mirror sync` made from the packed one,
as a fleet's would be."""
import os
import subprocess

from fixtures import Fixtures
from redist_server import RedistServer, build_mirror, ensure_tls_files

# the variants (tests/fake/variants.txt), each packed as the release of its
# files for the CUDA major of its cudart: 9.90.0.1 for CUDA 13, 9.91.0.1
# for CUDA 12
RELEASES = ("r990", "r991")


def start(tmp, fake_dir, platform="linux-x86_64", cudnnctl=None):
    """Packs RELEASES under tmp, serves them (with cudnnctl: the site
    `cudnnctl mirror sync` makes of them); the started RedistServer (.url,
    .ca_file; stop() it)."""
    fx = Fixtures(platform, fake_dir, parent=tmp)
    packs = [fx.fake_release(variant) for variant in RELEASES]
    mirror = os.path.join(tmp, "mirror")
    if cudnnctl:
        packed = os.path.join(tmp, "packed")
        build_mirror(packed, packs)
        env = dict(os.environ, HOME=tmp)
        r = subprocess.run([cudnnctl, "mirror", "sync", mirror, "--from", packed,
                            "--versions", "all"], env=env, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("mirror sync of %s failed (%d): %s" % (packed, r.returncode,
                                                                      r.stderr))
    else:
        build_mirror(mirror, packs)
    tls = os.path.dirname(ensure_tls_files(os.path.join(tmp, "tls"))[0])
    srv = RedistServer(mirror, tls=tls).start()
    srv.mirror_dir = mirror
    return srv


def start_plain(srv):
    """The same mirror over plain HTTP, as an intranet mirror often is
    (cudnnctl refuses its manifests; they come as files or over HTTPS)."""
    plain = RedistServer(srv.mirror_dir).start()
    plain.mirror_dir = srv.mirror_dir
    return plain
