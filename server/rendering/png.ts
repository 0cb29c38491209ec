// PNG files written from straight (not premultiplied) RGBA pixels: the three chunks of the format
// around node's own zlib, deflated off the event loop on libuv's pool.
//
// Why not Skia's encoder (canvas.encode('png')): it has no compression options and uses zlib level
// 6 with adaptive row filters, 87 ms for a 1024 px gradient code, three times the render budget.
// pngjs (MIT) filters and packs rows in JavaScript on the event loop (17 ms synchronously, 21-49 ms
// through its streams); sharp is fast but brings libvips (LGPL-3.0). Filter type 0 ("none") with a
// low deflate level gives files about the size of Skia's in a fifth of the time (docs/rendering.md).
import { promisify } from 'node:util';
import { crc32, deflate } from 'node:zlib';
import { ReusePool } from './reuse.js';

const deflateAsync = promisify(deflate);

/**
 * zlib levels of the image data, chosen by how much of the image repeats the row above. Level 4 is
 * the first with lazy matching: it halves to quarters the size of codes drawn in solid squares, where
 * most rows repeat (1024 px: 29 KiB at level 3, 15 KiB at 4; 4096 px: 308 KiB, 83 KiB), for a few
 * milliseconds. On images where rows differ (gradients, round dots) it saves 10-20% and doubles the
 * deflate's time (styled 1024 px: 7 ms at level 3, 14 ms at 4), so those get level 3
 * (docs/rendering.md).
 */
const PNG_LEVEL_REPEATING = 4;
const PNG_LEVEL_VARIED = 3;
/** The share of rows repeating the one above from which an image counts as repeating. */
const REPEATING_SHARE = 0.5;

// The filtered rows of a 1024 px image are 4 MiB, allocated and faulted in anew for every image
// (and pressing V8 to collect for the memory outside its heap); a few are kept for reuse. A buffer
// is taken for one image and given back once its deflate is done, so images encoded at the same
// time never share one. Buffers above 8 MiB (images over about 1400 px) are not kept.
const scratch = new ReusePool<Buffer>(4);
const SCRATCH_MAX_BYTES = 8 * 2 ** 20;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** An 8-bit RGBA PNG of `width` × `height` pixels, `rgba` holding 4 bytes per pixel, row by row. */
export async function encodePng(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number): Promise<Buffer> {
  const stride = width * 4;
  if (rgba.length !== stride * height)
    throw new Error(`expected ${stride * height} bytes of pixels, got ${rgba.length}`);
  const src = Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength);
  // Each row prefixed by its filter type. A row equal to the one above (most rows of a QR code: a
  // module is many pixels tall) is written as filter 2, "up", whose bytes are then all zero; any
  // other row as filter 0, "none". Both cost a memcmp or a copy, nothing per pixel in JavaScript.
  const size = (stride + 1) * height;
  const rows = scratch.take(String(size)) ?? Buffer.allocUnsafe(size);
  let repeated = 0;
  for (let y = 0; y < height; y++) {
    const o = y * (stride + 1);
    const start = y * stride;
    if (y > 0 && src.compare(src, start - stride, start, start, start + stride) === 0) {
      rows[o] = 2;
      rows.fill(0, o + 1, o + 1 + stride);
      repeated++;
    } else {
      rows[o] = 0;
      src.copy(rows, o + 1, start, start + stride);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type: RGBA
  // compression 0, filter method 0, no interlace
  let idat: Buffer;
  try {
    const level = repeated >= height * REPEATING_SHARE ? PNG_LEVEL_REPEATING : PNG_LEVEL_VARIED;
    idat = await deflateAsync(rows, { level, memLevel: 9 });
  } finally {
    if (size <= SCRATCH_MAX_BYTES) scratch.give(String(size), rows);
  }
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}
