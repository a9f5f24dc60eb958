//! tether-kandev-endpoint: the host-owned, observed MCP endpoint (the seed's
//! in-session "kandev" server) and the probe's sentinel toolset.
//!
//! Not built yet: the observed-endpoint issue fills this crate (rmcp over
//! streamable HTTP, legacy SSE and the `tether-bridge` stdio relay). Until
//! then it exports nothing, so nothing can mistake it for working.
