"""A tiny RGB canvas that writes PNG files (zlib only, no dependencies).

Enough for bar charts and memory-plan pictures: filled and outlined
rectangles, horizontal / vertical lines and text in a 5x7 bitmap font
(upper case; lower case letters are drawn as upper case).
"""

import struct
import zlib

# 5x7 glyphs, 7 rows of 5 pixels ('#' = ink).
_GLYPHS = {
    " ": ".....,.....,.....,.....,.....,.....,.....",
    "0": ".###.,#...#,#..##,#.#.#,##..#,#...#,.###.",
    "1": "..#..,.##..,..#..,..#..,..#..,..#..,.###.",
    "2": ".###.,#...#,....#,...#.,..#..,.#...,#####",
    "3": "#####,...#.,..#..,...#.,....#,#...#,.###.",
    "4": "...#.,..##.,.#.#.,#..#.,#####,...#.,...#.",
    "5": "#####,#....,####.,....#,....#,#...#,.###.",
    "6": "..##.,.#...,#....,####.,#...#,#...#,.###.",
    "7": "#####,....#,...#.,..#..,.#...,.#...,.#...",
    "8": ".###.,#...#,#...#,.###.,#...#,#...#,.###.",
    "9": ".###.,#...#,#...#,.####,....#,...#.,.##..",
    "A": ".###.,#...#,#...#,#####,#...#,#...#,#...#",
    "B": "####.,#...#,#...#,####.,#...#,#...#,####.",
    "C": ".###.,#...#,#....,#....,#....,#...#,.###.",
    "D": "###..,#..#.,#...#,#...#,#...#,#..#.,###..",
    "E": "#####,#....,#....,####.,#....,#....,#####",
    "F": "#####,#....,#....,####.,#....,#....,#....",
    "G": ".###.,#...#,#....,#.###,#...#,#...#,.####",
    "H": "#...#,#...#,#...#,#####,#...#,#...#,#...#",
    "I": ".###.,..#..,..#..,..#..,..#..,..#..,.###.",
    "J": "..###,...#.,...#.,...#.,...#.,#..#.,.##..",
    "K": "#...#,#..#.,#.#..,##...,#.#..,#..#.,#...#",
    "L": "#....,#....,#....,#....,#....,#....,#####",
    "M": "#...#,##.##,#.#.#,#.#.#,#...#,#...#,#...#",
    "N": "#...#,#...#,##..#,#.#.#,#..##,#...#,#...#",
    "O": ".###.,#...#,#...#,#...#,#...#,#...#,.###.",
    "P": "####.,#...#,#...#,####.,#....,#....,#....",
    "Q": ".###.,#...#,#...#,#...#,#.#.#,#..#.,.##.#",
    "R": "####.,#...#,#...#,####.,#.#..,#..#.,#...#",
    "S": ".####,#....,#....,.###.,....#,....#,####.",
    "T": "#####,..#..,..#..,..#..,..#..,..#..,..#..",
    "U": "#...#,#...#,#...#,#...#,#...#,#...#,.###.",
    "V": "#...#,#...#,#...#,#...#,#...#,.#.#.,..#..",
    "W": "#...#,#...#,#...#,#.#.#,#.#.#,#.#.#,.#.#.",
    "X": "#...#,#...#,.#.#.,..#..,.#.#.,#...#,#...#",
    "Y": "#...#,#...#,.#.#.,..#..,..#..,..#..,..#..",
    "Z": "#####,....#,...#.,..#..,.#...,#....,#####",
    ".": ".....,.....,.....,.....,.....,.##..,.##..",
    ",": ".....,.....,.....,.....,.##..,..#..,.#...",
    ":": ".....,.##..,.##..,.....,.##..,.##..,.....",
    "_": ".....,.....,.....,.....,.....,.....,#####",
    "-": ".....,.....,.....,#####,.....,.....,.....",
    "+": ".....,..#..,..#..,#####,..#..,..#..,.....",
    "/": ".....,....#,...#.,..#..,.#...,#....,.....",
    "=": ".....,.....,#####,.....,#####,.....,.....",
    "(": "...#.,..#..,.#...,.#...,.#...,..#..,...#.",
    ")": ".#...,..#..,...#.,...#.,...#.,..#..,.#...",
    "[": ".###.,.#...,.#...,.#...,.#...,.#...,.###.",
    "]": ".###.,...#.,...#.,...#.,...#.,...#.,.###.",
    "%": "##...,##..#,...#.,..#..,.#...,#..##,...##",
    "<": "...#.,..#..,.#...,#....,.#...,..#..,...#.",
    ">": ".#...,..#..,...#.,....#,...#.,..#..,.#...",
    "#": ".#.#.,.#.#.,#####,.#.#.,#####,.#.#.,.#.#.",
    "*": ".....,..#..,#.#.#,.###.,#.#.#,..#..,.....",
    "'": "..#..,..#..,.#...,.....,.....,.....,.....",
    "!": "..#..,..#..,..#..,..#..,..#..,.....,..#..",
    "?": ".###.,#...#,....#,...#.,..#..,.....,..#..",
    "|": "..#..,..#..,..#..,..#..,..#..,..#..,..#..",
}
_FONT = {c: [r for r in g.split(",")] for c, g in _GLYPHS.items()}
CHAR_W = 6  # 5 pixels and a gap, at scale 1
CHAR_H = 7


def text_width(s, scale=1):
    """Width in pixels of s drawn at scale."""
    return max(len(s) * CHAR_W - 1, 0) * scale


class Canvas:
    """w x h RGB image; colours are (r, g, b) tuples of 0..255."""

    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def rect(self, x0, y0, x1, y1, color):
        """Fill [x0, x1) x [y0, y1), clipped to the image."""
        x0, x1 = max(0, int(x0)), min(self.w, int(x1))
        y0, y1 = max(0, int(y0)), min(self.h, int(y1))
        if x0 >= x1:
            return
        row = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            i = 3 * (y * self.w + x0)
            self.px[i:i + len(row)] = row

    def box(self, x0, y0, x1, y1, fill, edge=(0, 0, 0)):
        """A filled rectangle with a 1-pixel outline."""
        self.rect(x0, y0, x1, y1, fill)
        self.rect(x0, y0, x1, y0 + 1, edge)
        self.rect(x0, y1 - 1, x1, y1, edge)
        self.rect(x0, y0, x0 + 1, y1, edge)
        self.rect(x1 - 1, y0, x1, y1, edge)

    def hline(self, x0, x1, y, color):
        self.rect(x0, y, x1, y + 1, color)

    def vline(self, x, y0, y1, color):
        self.rect(x, y0, x + 1, y1, color)

    def text(self, x, y, s, color=(0, 0, 0), scale=1):
        """Draw s with its top-left corner at (x, y); unknown characters
        are drawn as '?'."""
        for k, ch in enumerate(s.upper()):
            rows = _FONT.get(ch, _FONT["?"])
            cx = x + k * CHAR_W * scale
            for r, bits in enumerate(rows):
                for c, b in enumerate(bits):
                    if b == "#":
                        self.rect(cx + c * scale, y + r * scale,
                                  cx + (c + 1) * scale,
                                  y + (r + 1) * scale, color)

    def png(self):
        """The image as PNG file bytes (8-bit RGB, no interlace)."""
        stride = 3 * self.w
        raw = b"".join(b"\x00" + bytes(self.px[y * stride:(y + 1) * stride])
                       for y in range(self.h))

        def chunk(tag, data):
            body = tag + data
            return (struct.pack(">I", len(data)) + body
                    + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF))

        ihdr = struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                + chunk(b"IDAT", zlib.compress(raw, 9))
                + chunk(b"IEND", b""))

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.png())


def read_size(data):
    """(width, height) from PNG bytes; ValueError if not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    return struct.unpack(">II", data[16:24])
