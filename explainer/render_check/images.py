"""Pixel statistics on screenshots, computed by Chromium itself on a blank helper page.

Keeping this in the browser avoids an imaging dependency; the helper page lives in its own
context, so the page under test never sees it.
"""

from __future__ import annotations

import base64

_JS = r"""
async ([op, pngs, arg]) => {
  const load = async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    return await createImageBitmap(new Blob([bytes], {type: "image/png"}));
  };
  const pixels = (bitmap, w, h) => {
    const canvas = new OffscreenCanvas(w, h);
    const ctx = canvas.getContext("2d", {willReadFrequently: true});
    ctx.drawImage(bitmap, 0, 0, w, h);
    return ctx.getImageData(0, 0, w, h).data;
  };
  if (op === "stats") {
    const bitmap = await load(pngs[0]);
    const data = pixels(bitmap, bitmap.width, bitmap.height);
    const counts = new Map();
    for (let i = 0; i < data.length; i += 4) {
      // 4 bits a channel: antialiasing noise and dithering do not count as content.
      const key = ((data[i] >> 4) << 8) | ((data[i + 1] >> 4) << 4) | (data[i + 2] >> 4);
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    const total = data.length / 4;
    const dominant = Math.max(...counts.values());
    return {width: bitmap.width, height: bitmap.height, pixels: total,
            colors: counts.size, off_dominant: total - dominant};
  }
  if (op === "diff") {
    const [a, b] = [await load(pngs[0]), await load(pngs[1])];
    const w = Math.min(a.width, b.width), h = Math.min(a.height, b.height);
    const pa = pixels(a, w, h), pb = pixels(b, w, h);
    let changed = 0;
    for (let i = 0; i < pa.length; i += 4) {
      const d = Math.abs(pa[i] - pb[i]) + Math.abs(pa[i + 1] - pb[i + 1]) + Math.abs(pa[i + 2] - pb[i + 2]);
      if (d > 24) changed += 1;
    }
    return {pixels: w * h, changed: changed + Math.abs(a.width * a.height - b.width * b.height)};
  }
  if (op === "thumbnail") {
    const bitmap = await load(pngs[0]);
    const scale = Math.min(1, arg / bitmap.width);
    const w = Math.max(1, Math.round(bitmap.width * scale)), h = Math.max(1, Math.round(bitmap.height * scale));
    const canvas = new OffscreenCanvas(w, h);
    const ctx = canvas.getContext("2d");
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(bitmap, 0, 0, w, h);
    const blob = await canvas.convertToBlob({type: "image/png"});
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(text);
  }
  throw new Error("unknown op " + op);
}
"""


class ImageTools:
    def __init__(self, context, page) -> None:
        self._context = context
        self._page = page

    @classmethod
    async def open(cls, browser) -> ImageTools:
        context = await browser.new_context()
        return cls(context, await context.new_page())

    async def stats(self, png: bytes) -> dict:
        """Pixel count, distinct coarse colours, and how many pixels differ from the commonest colour."""
        return await self._page.evaluate(_JS, ["stats", [_b64(png)], None])

    async def diff(self, a: bytes, b: bytes) -> dict:
        """How many pixels differ visibly between two screenshots of the same region."""
        return await self._page.evaluate(_JS, ["diff", [_b64(a), _b64(b)], None])

    async def thumbnail(self, png: bytes, width: int) -> bytes:
        """The picture scaled down to `width` pixels across, as PNG."""
        return base64.b64decode(await self._page.evaluate(_JS, ["thumbnail", [_b64(png)], width]))

    async def close(self) -> None:
        await self._context.close()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
