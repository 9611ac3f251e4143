"""The angle where phone photos of the kernel's QR screens stop decoding (docs/QR.md).

Not a test (make test does not run it; it takes minutes): give it directories of screens
saved by `tools/cleanroom run --qr-pages DIR`, and it photographs every screen with
tests/photosim.py at each angle off-axis (4 degrees of tilt, blur, noise, uneven light, JPEG;
the turn alternating left and right) at 1500 and 3000 pixels wide, reads the photos as
decode-photos does, and prints how many of the codes each set gave back:

    .venv/bin/python tests/qr_photo_sweep.py results/uefi-pages results/iso-pages [--angles 15,25,35]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from photosim import Shot, photograph_file

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from cleanroom_host.records import qrdecode  # noqa: E402


def codes_read(pages: list[Path], shot: Shot, scratch: Path) -> tuple[int, int]:
    """(codes read from the photos, codes on the screens)."""
    read, shown = 0, 0
    for k, page in enumerate(pages):
        truth = {c.index for c in qrdecode.read_image(page).chunks}
        photo = scratch / "photo.jpg"
        sign = 1 if k % 2 else -1
        photograph_file(page, photo, replace(shot, angle=sign * shot.angle, tilt=sign * shot.tilt, seed=k))
        read += len(truth & {c.index for c in qrdecode.read_image(photo).chunks})
        shown += len(truth)
    return read, shown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path, help="directories of qr-*.ppm screens")
    ap.add_argument("--angles", default="15,20,25,30,35,40,45,50", help="degrees off-axis, comma-separated")
    ap.add_argument("--noise", type=float, default=Shot.noise)
    ap.add_argument("--quality", type=int, default=Shot.quality, help="JPEG quality")
    args = ap.parse_args()
    angles = [float(a) for a in args.angles.split(",")]
    scratch = Path(sys.argv[0]).resolve().parent.parent / "build" / "photo-sweep"
    scratch.mkdir(parents=True, exist_ok=True)
    for d in args.dirs:
        pages = sorted(d.glob("qr-*.ppm"))
        if not pages:
            print(f"{d}: no qr-*.ppm screens", file=sys.stderr)
            return 2
        for width in (1500, 3000):
            row = []
            for angle in angles:
                read, shown = codes_read(pages, Shot(angle=angle, width=width, noise=args.noise, quality=args.quality),
                                         scratch)
                row.append(f"{angle:g}:{read}/{shown}")
            print(f"{d} {width} px: " + " ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
