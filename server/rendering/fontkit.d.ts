// The part of fontkit (MIT) that server/rendering/text.ts uses; the package ships no types.
declare module 'fontkit' {
  export interface PathCommand {
    command: 'moveTo' | 'lineTo' | 'quadraticCurveTo' | 'bezierCurveTo' | 'closePath';
    args: number[];
  }
  export interface Glyph {
    path: { commands: PathCommand[] };
  }
  export interface GlyphPosition {
    xAdvance: number;
    yAdvance: number;
    xOffset: number;
    yOffset: number;
  }
  export interface Font {
    unitsPerEm: number;
    ascent: number;
    descent: number;
    layout(text: string): { glyphs: Glyph[]; positions: GlyphPosition[] };
  }
  export function create(buffer: Buffer): Font | { fonts: Font[] };
}
