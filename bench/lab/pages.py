"""The five web pages of E-TCP section 4, exactly as the simulator reads them
(tests/scenarios/etcp_pages.h: K = 1024, ranges spread evenly, request order
root HTML, other HTML, images, Java parts; Java parts are class `script`)."""

K = 1024


def _range(n, lo_k, hi_k, cls):
    lo, hi = lo_k * K, hi_k * K
    return [[lo if n == 1 else lo + (hi - lo) * i // (n - 1), cls] for i in range(n)]


PAGES = {
    "text": _range(1, 29, 29, "html") + _range(3, 7, 13, "image"),
    "map": _range(1, 5, 5, "html") + _range(3, 1, 3, "image") + _range(1, 67, 67, "image"),
    "graphics": _range(1, 7, 7, "html") + _range(9, 1, 3, "image") + _range(4, 9, 12, "image"),
    "frames": (_range(4, 1, 2, "html") + _range(1, 7, 7, "html") + _range(1, 83, 83, "html")
               + _range(14, 1, 3, "image") + _range(7, 5, 19, "image")),
    "java": (_range(1, 8, 8, "html") + _range(7, 1, 2, "image") + _range(3, 4, 11, "image")
             + _range(14, 1, 3, "script") + _range(11, 4, 18, "script")),
}


# Issue 21 item 4: a modern page over HTTP/1.1's six connections per host
# (tests/scenarios/modern_page_test.cc's shape 4): a 40 KB root HTML, two
# stylesheets and two scripts in its head (24, 16, 64, 40 KB; class `script`,
# render-blocking), then 18 images of 14, 16, ... 48 KB.
PAGES["modern"] = ([[40 * K, "html"]] + [[kb * K, "script"] for kb in (24, 16, 64, 40)]
                   + [[(14 + 2 * i) * K, "image"] for i in range(18)])


def page_bytes(name):
    return sum(b for b, _ in PAGES[name])
