"""The image of one line of a scan, cut out for the recogniser (docs/ingester.md, "Scanned pages (OCR)").

A scanned page is never quite straight: a line of a page fed a degree askew
climbs a twentieth of its length, as much as its own height over a long line.
The detector's box follows the line (four corners, turned with it); a crop
along the page's axes would take in the ends of the lines above and below it
and read them into this one (a body line read as "Sanderlian thedof
thewavepcinsall…"). So the box is cut out along its own axes and set
straight (a perspective warp, as the OCR engine itself does), widened by
``SIDE_PAD`` of its height at each end (the recogniser drops the spaces of a
line cut tight) and by ``EDGE_PAD`` above and below (the box is already taller
than the type: more takes in the lines above and below on a tightly set page;
less reads more capitals as small letters, "OcR", and makes the recogniser's
input, scaled to 48 pixels tall, wider and slower), and a line under
``MIN_HEIGHT`` pixels tall is enlarged to it (bicubic) before it is read: the recogniser works at 48 pixels, and the
spaces of a 150 dpi scan's body text, some 30 pixels tall, are read when it
is enlarged smoothly first, and lost when the recogniser stretches it itself.
"""

from __future__ import annotations

from typing import Any

SIDE_PAD = 0.25  # the share of a line's height added at each end of its crop
EDGE_PAD = 0.1  # and above and below it
MIN_HEIGHT = 64  # pixels a line's crop is enlarged to, at least, before it is read


def line_crop(image: Any, corners: Any) -> Any:
    """The line whose box has ``corners`` (4 × (x, y), clockwise from its top left, in
    ``image``'s pixels) cut out of ``image`` (an array of rows) and set straight; None
    when the box is too small to read."""
    import cv2
    import numpy as np

    points = np.asarray(corners, dtype=np.float32)
    width = max(np.linalg.norm(points[0] - points[1]), np.linalg.norm(points[3] - points[2]))
    height = max(np.linalg.norm(points[0] - points[3]), np.linalg.norm(points[1] - points[2]))
    if width < 4 or height < 4:
        return None
    along = (points[1] - points[0]) / max(float(np.linalg.norm(points[1] - points[0])), 1.0)
    down = (points[3] - points[0]) / max(float(np.linalg.norm(points[3] - points[0])), 1.0)
    pad, edge = along * SIDE_PAD * height, down * EDGE_PAD * height
    source = np.array(
        [points[0] - pad - edge, points[1] + pad - edge, points[2] + pad + edge, points[3] - pad + edge],
        dtype=np.float32,
    )
    out_w, out_h = round(width + 2 * SIDE_PAD * height), round(height * (1 + 2 * EDGE_PAD))
    target = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], dtype=np.float32)
    warp = cv2.getPerspectiveTransform(source, target)
    crop = cv2.warpPerspective(image, warp, (out_w, out_h), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    if out_h < MIN_HEIGHT:
        crop = cv2.resize(crop, (round(out_w * MIN_HEIGHT / out_h), MIN_HEIGHT), interpolation=cv2.INTER_CUBIC)
    return crop
