// Preloaded into the conformance suite (NODE_OPTIONS=--require=…) so each
// test server it starts binds 127.0.0.1 only (localhost-only.cjs), and binds
// at once: the suite reads `server.address()` right after `listen(0)`, which
// a host name would otherwise leave to an asynchronous lookup.
const dns = require("dns");
const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  const cb = typeof options === "function" ? options : callback;
  if (host === "127.0.0.1" && typeof cb === "function") {
    const all = typeof options === "object" && options && options.all;
    if (all) cb(null, [{ address: "127.0.0.1", family: 4 }]);
    else cb(null, "127.0.0.1", 4);
    return {};
  }
  return lookup.apply(this, arguments);
};
require("../localhost-only.cjs");
