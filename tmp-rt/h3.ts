import { createCanvas, loadImage } from '@napi-rs/canvas';
import { parseLogo } from '../server/rendering/logo.ts';
let shapes = '';
for (let i = 0; i < 3000; i++) shapes += `<circle cx="${(i * 37) % 1000}" cy="${(i * 91) % 1000}" r="${20 + (i % 30)}" fill="#${(i * 2654435761 % 0xffffff).toString(16).padStart(6, '0')}"/>`;
const svgs = {
 turb: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><filter id="t"><feTurbulence baseFrequency="0.05" numOctaves="12"/><feGaussianBlur stdDeviation="8"/></filter>${'<rect width="100" height="100" filter="url(#t)"/>'.repeat(10)}</svg>`,
 heavy: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1000 1000"><defs><filter id="b"><feGaussianBlur stdDeviation="40"/><feTurbulence baseFrequency="0.02" numOctaves="10"/></filter></defs><g filter="url(#b)">${shapes}</g></svg>`,
};
for (const [name, svg] of Object.entries(svgs)) {
  const logo = parseLogo('data:image/svg+xml;base64,' + Buffer.from(svg).toString('base64'));
  const c = createCanvas(512, 512);
  const r = [];
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    const img = await loadImage(logo.data);
    c.getContext('2d').drawImage(img, 0, 0, 512, 512);
    c.getContext('2d').getImageData(0,0,1,1);
    r.push((performance.now() - t0).toFixed(1));
  }
  console.log(name, svg.length, r.join(' '));
}
