// A stand-in for the TSDB's v2 write API, run as its own process (inside a test namespace): every request becomes
// one JSON line {url, auth, body} in the output file (gzip bodies unpacked); answers 204. Args: HOST PORT OUTFILE.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';

const [host, port, out] = process.argv.slice(2);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
    appendFileSync(out, `${JSON.stringify({ url: req.url, auth: req.headers.authorization, body: body.toString('utf8') })}\n`);
    res.statusCode = 204;
    res.end();
  });
});
server.listen(Number(port), host, () => process.stdout.write('tsdb receiver ready\n'));
