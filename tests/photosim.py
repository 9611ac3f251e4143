"""Simulated phone photos of a screen, for the QR tests (docs/QR.md, "Photographing").

A screendump (what the screen shows, pixel for pixel) is turned into what a
hand-held phone makes of it: an LCD's grey black and dim white, a pinhole
camera with a phone's field of view looking at the screen from `angle`
degrees off-axis and turned `tilt` degrees about its own axis (the screen's
near edge larger than its far one), resampled to a photo `width` pixels
wide (4:3) with the screen filling most of it, a Gaussian blur (focus, hand
shake), light that falls off across the picture, sensor noise, and JPEG
compression. numpy and Pillow only; every photo is reproducible from its seed.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

PHONE_FOV_DEG = 68.0  # a phone's main camera, across the long side
SCREEN_BLACK, SCREEN_WHITE = 28, 228  # an LCD's dark and light as a camera exposes them
BACKGROUND = 45  # bezel and desk around the screen


@dataclass(frozen=True)
class Shot:
    """How the photo is taken; the defaults are the issue's: 15 degrees off-axis, 4 degrees of
    tilt, blur 1.5 px, noise, uneven light, JPEG quality 60."""

    angle: float = 15.0  # degrees between the camera's axis and the screen's normal (a turn to the side)
    tilt: float = 4.0  # degrees the camera is turned about its own axis
    pitch: float = 3.0  # degrees it looks down (or up) at the screen too
    width: int = 3000  # photo pixels across (4:3)
    fill: float = 0.85  # the whole screen in the picture, framed to take this much of its width or height
    blur: float = 1.5  # Gaussian radius, photo pixels
    noise: float = 6.0  # standard deviation of the sensor noise, grey levels
    light: float = 0.45  # the darkest corner gets this much less light than the brightest
    quality: int = 60  # JPEG
    seed: int = 0


def _rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Camera orientation: turned about the vertical axis, then the horizontal one, then its own."""
    cy, sy = math.cos(yaw), math.sin(yaw)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cr, sr = math.cos(roll), math.sin(roll)
    ry = np.array([[cy, 0, -sy], [0, 1, 0], [sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
    rz = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
    return rz @ rx @ ry


def screen_corners_in_photo(screen: tuple[int, int], shot: Shot) -> np.ndarray:
    """Where the screen's corners (top left, top right, bottom right, bottom left) land in the photo:
    seen from where a phone would be, then framed as a person frames it (zoomed and aimed so the
    whole screen fills `fill` of the picture's width or height, whichever it reaches first)."""
    w, h = screen
    pw, ph = shot.width, shot.width * 3 // 4
    focal = pw / 2 / math.tan(math.radians(PHONE_FOV_DEG) / 2)
    distance = focal * w / (shot.fill * pw)  # straight on, the screen would span `fill` of the width
    rot = _rotation(math.radians(shot.angle), math.radians(shot.pitch), math.radians(shot.tilt))
    corners = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0], [-w / 2, h / 2, 0]])
    # the camera sits on a line through the screen's centre, `distance` away, and looks at the centre
    cam = (rot @ corners.T).T + np.array([0, 0, distance])
    seen = np.stack([focal * cam[:, 0] / cam[:, 2], focal * cam[:, 1] / cam[:, 2]], axis=1)
    low, high = seen.min(axis=0), seen.max(axis=0)
    zoom = min(shot.fill * pw / (high[0] - low[0]), shot.fill * ph / (high[1] - low[1]))
    return (seen - (low + high) / 2) * zoom + np.array([pw / 2, ph / 2])


def _homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 projective map taking the four points src to dst."""
    rows = []
    for (x, y), (u, v) in zip(src, dst):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, -u])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, -v])
    _, _, vt = np.linalg.svd(np.array(rows, dtype=float))
    m = vt[-1].reshape(3, 3)
    return m / m[2, 2]


def _light(width: int, height: int, falloff: float, direction: float) -> np.ndarray:
    """How much light reaches each pixel: a ramp from one side (a window, a lamp) and a lens's
    vignette; smooth, so computed on a coarse grid and scaled up."""
    step = 8
    yy, xx = np.ogrid[0:height:step, 0:width:step]
    x, y = xx.astype(np.float32) / width - 0.5, yy.astype(np.float32) / height - 0.5
    ramp = (math.cos(direction) * x + math.sin(direction) * y + 0.71) / 1.42
    coarse = 1 - falloff * (0.75 * ramp + 0.25 * (x * x + y * y) / 0.5)
    field = Image.fromarray(coarse.astype(np.float32), "F").resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(field, dtype=np.float32)


def photo_jpeg(screen: Image.Image, shot: Shot = Shot()) -> bytes:
    """The screen as a phone photo: a greyscale JPEG file's bytes."""
    gray = screen.convert("L")
    lcd = gray.point(lambda v: SCREEN_BLACK + (SCREEN_WHITE - SCREEN_BLACK) * v // 255)
    pw, ph = shot.width, shot.width * 3 // 4
    src = np.array([[0, 0], [gray.width, 0], [gray.width, gray.height], [0, gray.height]], dtype=float)
    dst = screen_corners_in_photo(gray.size, shot)
    back = _homography(dst, src)  # PIL asks, for every photo pixel, where it comes from
    photo = lcd.transform((pw, ph), Image.Transform.PERSPECTIVE, tuple(back.flatten()[:8]),
                          resample=Image.Resampling.BICUBIC, fillcolor=BACKGROUND)
    photo = photo.filter(ImageFilter.GaussianBlur(shot.blur))
    rng = np.random.default_rng(shot.seed)
    pixels = np.asarray(photo, dtype=np.float32) * _light(pw, ph, shot.light, rng.uniform(0, 2 * math.pi))
    pixels += rng.standard_normal(pixels.shape, dtype=np.float32) * np.float32(shot.noise)
    out = Image.fromarray(np.clip(pixels, 0, 255, out=pixels).astype(np.uint8), "L")
    jpeg = io.BytesIO()
    out.save(jpeg, "JPEG", quality=shot.quality)
    return jpeg.getvalue()


def photograph(screen: Image.Image, shot: Shot = Shot()) -> Image.Image:
    """The screen as a phone photo, decoded again from its JPEG."""
    return Image.open(io.BytesIO(photo_jpeg(screen, shot)))


def photograph_file(screen: Path, dest: Path, shot: Shot = Shot()) -> None:
    """A screendump file's phone photo, saved as the phone would (JPEG)."""
    with Image.open(screen) as img:
        dest.write_bytes(photo_jpeg(img, shot))
