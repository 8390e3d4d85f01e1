// Reads and verifies a backup zip with yauzl: entry names, count, file list, sizes (bounded) and SHA-256, extracted to a work folder.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { ApiError, E } from '../../http/errors.ts';
import { FILE_LIST_NAME, fileListSchema, isSafeEntryName, type FileList, type ReaderLimits } from './archive-format.ts';

/** A verified, extracted archive. */
export interface ExtractedArchive {
  list: FileList;
  /** Folder holding every listed file under its name. */
  dir: string;
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolveZip, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (err, zip) =>
      err ? reject(err) : resolveZip(zip));
  });
}

/** Every entry of the central directory (names checked by yauzl, then by us), at most `max`. */
function readEntries(zip: yauzl.ZipFile, max: number): Promise<yauzl.Entry[]> {
  return new Promise((resolveAll, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      if (!isSafeEntryName(entry.fileName)) {
        reject(new ApiError(E.BACKUP_CREATE_FILE, `unsafe path in archive: ${JSON.stringify(entry.fileName.slice(0, 120))}`));
        return;
      }
      entries.push(entry);
      if (entries.length > max) reject(new ApiError(E.BACKUP_READER, `more than ${max} entries`));
      else zip.readEntry();
    });
    zip.on('end', () => resolveAll(entries));
    zip.on('error', (err: Error) => {
      // yauzl refuses absolute and `..` paths itself while reading the central directory.
      if (/absolute path|invalid relative path|invalid characters/i.test(err.message)) reject(new ApiError(E.BACKUP_CREATE_FILE, err.message));
      else reject(new ApiError(E.BACKUP_OPEN_ARCHIVE, err.message));
    });
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolveStream, reject) => {
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolveStream(stream)));
  });
}

/** A pass-through that fails once more than `limit` bytes went through, hashing what passes. */
function boundedHasher(limit: number, name: string) {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > limit) return done(new ApiError(E.BACKUP_UNZIP_FILE, `${name} is larger than its listed size or the limit`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex'), bytes: () => bytes };
}

/** Reads one entry fully into memory (the file list), bounded. */
async function readSmallEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, limit: number): Promise<string> {
  if (entry.uncompressedSize > limit) throw new ApiError(E.BACKUP_READER, `${FILE_LIST_NAME} is too large`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of await openEntry(zip, entry)) {
      bytes += (chunk as Buffer).length;
      if (bytes > limit) throw new ApiError(E.BACKUP_READER, `${FILE_LIST_NAME} is too large`);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(E.BACKUP_UNZIP_FILE, `${FILE_LIST_NAME}: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseFileList(text: string): FileList {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError(E.BACKUP_READER, `${FILE_LIST_NAME} is not JSON`);
  }
  if (json && typeof json === 'object' && Array.isArray((json as { files?: unknown }).files) && (json as { files: unknown[] }).files.length === 0) {
    throw new ApiError(E.BACKUP_EMPTY_FILE_LIST);
  }
  const parsed = fileListSchema.safeParse(json);
  if (!parsed.success) throw new ApiError(E.BACKUP_READER, `${FILE_LIST_NAME} is not a panel backup file list`);
  return parsed.data;
}

/**
 * Verifies the archive at `path` and extracts its listed files into `workDir` (which must not exist yet). Order of
 * checks: the zip opens; it has entries; every name is a safe relative path; the file list is present and valid
 * and not empty; `authenticate` accepts it (the panel: key check and signature, archive-signature.ts) before
 * anything it lists is trusted; the entry count and the names match the list; declared sizes match and stay within
 * `limits`; each extracted file has its listed size and SHA-256. Throws an `ApiError` with the spec's text on the
 * first failure.
 */
export async function extractArchive(
  path: string,
  workDir: string,
  limits: ReaderLimits,
  authenticate: (list: FileList) => void = () => undefined,
): Promise<ExtractedArchive> {
  if (statSync(path).size === 0) throw new ApiError(E.BACKUP_EMPTY_ARCHIVE);
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(path);
  } catch (err) {
    throw new ApiError(E.BACKUP_OPEN_ARCHIVE, (err as Error).message);
  }
  try {
    if (zip.entryCount === 0) throw new ApiError(E.BACKUP_EMPTY_ARCHIVE);
    const entries = await readEntries(zip, limits.maxEntries);
    const listEntry = entries.find((e) => e.fileName === FILE_LIST_NAME);
    if (!listEntry) throw new ApiError(E.BACKUP_READER, `no ${FILE_LIST_NAME} in the archive`);
    const list = parseFileList(await readSmallEntry(zip, listEntry, limits.maxFileListBytes));
    authenticate(list);
    const others = entries.filter((e) => e !== listEntry);
    if (others.length !== list.files.length) throw new ApiError(E.BACKUP_FILE_COUNT_MISMATCH);
    const listed = new Map(list.files.map((f) => [f.name, f]));
    const seen = new Set<string>();
    for (const e of others) {
      const file = listed.get(e.fileName);
      if (!file || seen.has(e.fileName) || e.uncompressedSize !== file.size) throw new ApiError(E.BACKUP_FILE_MISMATCH);
      seen.add(e.fileName);
    }
    let total = 0;
    for (const e of others) {
      if (e.uncompressedSize > limits.maxEntryBytes) throw new ApiError(E.BACKUP_UNZIP_FILE, `${e.fileName} is larger than the limit`);
      total += e.uncompressedSize;
      if (total > limits.maxTotalBytes) throw new ApiError(E.BACKUP_UNZIP_FILE, 'the archive is larger than the limit');
    }
    try {
      mkdirSync(workDir, { recursive: false, mode: 0o700 });
    } catch (err) {
      throw new ApiError(E.BACKUP_CREATE_FOLDER, (err as Error).message);
    }
    const root = resolve(workDir);
    for (const e of others) {
      const file = listed.get(e.fileName)!;
      const target = resolve(root, e.fileName);
      if (!target.startsWith(root + sep)) throw new ApiError(E.BACKUP_CREATE_FILE, `unsafe path in archive: ${e.fileName}`);
      try {
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      } catch (err) {
        throw new ApiError(E.BACKUP_CREATE_FOLDER, (err as Error).message);
      }
      const hasher = boundedHasher(Math.min(file.size, limits.maxEntryBytes), e.fileName);
      let out;
      try {
        out = createWriteStream(target, { flags: 'wx', mode: 0o600 });
      } catch (err) {
        throw new ApiError(E.BACKUP_CREATE_FILE, (err as Error).message);
      }
      try {
        await pipeline(await openEntry(zip, e), hasher.stream, out);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw new ApiError(E.BACKUP_UNZIP_FILE, `${e.fileName}: ${(err as Error).message}`);
      }
      if (hasher.bytes() !== file.size || hasher.digest() !== file.sha256) throw new ApiError(E.BACKUP_FILE_MISMATCH);
    }
    return { list, dir: workDir };
  } finally {
    zip.close();
  }
}

/** Path of a listed file inside an extracted archive. */
export function extractedPath(archive: ExtractedArchive, name: string): string {
  return join(archive.dir, name);
}
