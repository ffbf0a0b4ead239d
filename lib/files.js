// files.js - what kindling's APIs that read and write files share: the path argument, the
// errors of the file system, and making folders.
//   checkPath(path, where)           a string, URL or Buffer, else KD_INVALID_TYPE (a number
//                                    would be taken as a file descriptor by Node's fs)
//   withFsErrors(where, fn, code)    fn() (or the Promise it returns), a file-system failure
//                                    (ENOENT, EACCES, EISDIR, ENOSPC, ...) turned into a
//                                    KindlingError with `code` (default KD_IO_ERROR), its message
//                                    `${where}: ${Node's message}`, Node's error as `cause` and
//                                    its errno, syscall and path kept
//   makeDirs(dir)                    dir and its missing parents, one mkdir each: fs.mkdirSync(dir,
//                                    {recursive: true}) never returns where a parent refuses new
//                                    entries with ENOENT (/proc/x on Node 20)
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { KindlingError, typeError } = require('./errors');

function checkPath(p, where) {
  if (typeof p !== 'string' && !(p instanceof URL) && !Buffer.isBuffer(p)) {
    throw typeError(`${where}: path must be a string, URL or Buffer, got ${p === null ? 'null' : typeof p}`);
  }
}

// Node's errors of a file operation: system errors (they name their syscall) and ERR_FS_* ones
// (a file too large to read at once, ...).
const isFsError = (e) => e !== null && typeof e === 'object' && !(e instanceof KindlingError) &&
  (typeof e.syscall === 'string' || (typeof e.code === 'string' && e.code.startsWith('ERR_FS_')));

function fsError(where, e, code) {
  const err = new KindlingError(`${where}: ${e.message}`, code);
  err.cause = e;
  for (const k of ['errno', 'syscall', 'path']) if (e[k] !== undefined) err[k] = e[k];
  return err;
}

function withFsErrors(where, fn, code = 'KD_IO_ERROR') {
  const rethrow = (e) => { throw isFsError(e) ? fsError(where, e, code) : e; };
  let r;
  try {
    r = fn();
  } catch (e) {
    rethrow(e);
  }
  return r !== null && typeof r === 'object' && typeof r.then === 'function' ? r.then(undefined, rethrow) : r;
}

function makeDirs(dir) {
  const missing = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d);
    } catch (e) {
      if (e.code !== 'EEXIST') throw e; // made meanwhile by another process
    }
  }
  if (!fs.statSync(dir).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', syscall: 'mkdir', path: dir });
  }
}

module.exports = { checkPath, withFsErrors, makeDirs };
