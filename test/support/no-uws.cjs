// Preloaded with --require: every uWebSockets.js binary fails to load, as on a Node that has none
// (24) or a machine whose glibc is too old for it. Only its .node files are refused; the rest
// of Node loads as usual.
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  if (/uws_[^/\\]*\.node$/.test(String(filename))) {
    throw Object.assign(new Error(`${filename}: cannot open shared object file (refused by test/support/no-uws.cjs)`), { code: 'ERR_DLOPEN_FAILED' });
  }
  return dlopen.call(this, module, filename, ...rest);
};
