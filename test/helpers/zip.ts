// Reading the ZIP files the service writes (print runs), with yauzl: not the writer they are made with.
import yauzl from 'yauzl';

/** Every file of a ZIP, read with yauzl (CRC checked). */
export async function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  const zipfile = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))),
  );
  const files = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zipfile.on('entry', (entry: yauzl.Entry) => {
      zipfile.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const parts: Buffer[] = [];
        stream.on('data', (c: Buffer) => parts.push(c));
        stream.on('error', reject);
        stream.on('end', () => {
          files.set(entry.fileName, Buffer.concat(parts));
          zipfile.readEntry();
        });
      });
    });
    zipfile.on('end', resolve);
    zipfile.on('error', reject);
    zipfile.readEntry();
  });
  return files;
}
