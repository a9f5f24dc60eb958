//! The dynamic plugin boundary: one `extern "C"` entry point returning a
//! `#[repr(C)]` table whose first field is the ABI version. Nothing crosses
//! but plain C types and JSON bytes; panics are caught on the plugin side.
//!
//! - Plugin side: [`export_plugin!`](crate::export_plugin) generates everything.
//! - Host side: [`load`] checks the ABI version before calling anything else,
//!   turns every failure into a clear [`LoadError`], never unloads a library,
//!   and returns a plugin that behaves exactly like a compiled-in one.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tether_core::harness::{Roles, ServerSetup, SetupGuide};
use tether_core::model::{Evidence, Timestamp};
use tether_core::passthrough::{Materialized, PassthroughStrategy};
use tether_core::records::RecordReader;
use tether_core::telemetry::{
    TelemetryAnswer, TelemetryReader, TelemetryRecord, TelemetrySetup, TelemetryTarget,
};
use tether_core::vocab::ReasonCode;
use tether_core::{
    AgentCapabilities, Decision, Plan, PlanContext, PluginDescriptor, ServerSpec, TransportObserver,
};

/// The ABI this build speaks. A library declaring another is refused.
pub const ABI_VERSION: u32 = tether_core::registry::PLUGIN_ABI_VERSION;
/// The entry point every plugin library exports.
pub const ENTRY_SYMBOL: &[u8] = b"tether_plugin_entry";

/// Bytes owned by the plugin; the host hands them back to `free_buf`.
#[repr(C)]
pub struct TetherBuf {
    /// Start of the bytes.
    pub ptr: *mut u8,
    /// Length.
    pub len: usize,
    /// Capacity (for the plugin to rebuild its allocation).
    pub cap: usize,
}

/// The table a plugin library returns. The first field is the ABI version,
/// read before anything else.
#[repr(C)]
pub struct TetherPluginV4 {
    /// Must equal the host's [`ABI_VERSION`].
    pub abi_version: u32,
    /// `{}` → [`WireDescriptor`] JSON.
    pub describe: extern "C" fn() -> TetherBuf,
    /// [`DecideIn`] JSON → [`WireResult`] of `[(name, Decision)]`.
    pub decide_all: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// [`MaterializeIn`] JSON → [`WireResult`] of [`Materialized`].
    pub materialize: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// [`ObserveIn`] JSON → [`WireResult`] of `[Evidence]`.
    pub read_output: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// [`TelemetryTarget`](tether_core::telemetry::TelemetryTarget) JSON
    /// (`{endpoint, authorization}`) → [`WireResult`] of an optional
    /// [`TelemetrySetup`] (ABI 2).
    pub telemetry_setup: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// [`TelemetryIn`] JSON → [`WireResult`] of a [`TelemetryAnswer`] (ABI 2).
    pub read_telemetry: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// `{}` → [`WireResult`] of the plugin's
    /// [`RecordSource`](tether_core::records::RecordSource)s (ABI 3).
    pub record_sources: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// [`RecordIn`] JSON → [`WireResult`] of a
    /// [`RecordAnswer`](tether_core::records::RecordAnswer) (ABI 3).
    pub read_record: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// [`SetupIn`] JSON → [`WireResult`] of an optional
    /// [`ServerSetup`](tether_core::harness::ServerSetup) (ABI 4).
    pub server_setup: extern "C" fn(*const u8, usize) -> TetherBuf,
    /// Frees a buffer this plugin returned.
    pub free_buf: extern "C" fn(TetherBuf),
}

/// What `describe` answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireDescriptor {
    /// The plugin's descriptor.
    pub descriptor: PluginDescriptor,
    /// Its passthrough capabilities, when it is a passthrough plugin.
    pub passthrough: Option<AgentCapabilities>,
    /// Whether its CLI reports every delivered server
    /// (`PassthroughStrategy::reports_servers`); absent from older plugins.
    #[serde(default)]
    pub reports_servers: bool,
    /// Whether it has any of the roles the table carries (records,
    /// telemetry, set-up): what a plugin built before [`roles`](Self::roles)
    /// says, read as all three.
    #[serde(default)]
    pub reader: bool,
    /// Which of those roles it has (`records`, `telemetry`, `setup`); absent
    /// from older plugins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<String>>,
    /// The harness versions its record reader was verified on
    /// ([`RecordReader::records_verified_on`], ABI 4).
    #[serde(default)]
    pub records_verified_on: Option<tether_core::records::VerifiedRange>,
}

/// `decide_all`'s input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecideIn {
    /// The servers (duplicates already settled by the host's core).
    pub servers: Vec<ServerSpec>,
    /// The context.
    pub ctx: PlanContext,
}

/// `materialize`'s input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MaterializeIn {
    /// The plan.
    pub plan: Plan,
    /// The context.
    pub ctx: PlanContext,
    /// Where the host will write files.
    pub dir: PathBuf,
}

/// `read_output`'s input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObserveIn {
    /// One line of the CLI's stdout.
    pub line: String,
    /// When it was read.
    pub at: Timestamp,
}

/// `telemetry_setup`'s input: where the telemetry goes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetIn {
    /// The OTLP/HTTP base URL.
    pub endpoint: String,
    /// The `Authorization` value the receiver admits.
    pub authorization: String,
}

/// `read_telemetry`'s input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TelemetryIn {
    /// One record of the harness's telemetry.
    pub record: TelemetryRecord,
    /// The server names its configuration gives it today.
    pub configured: Vec<String>,
}

/// `read_record`'s input: one record, and the file it is from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordIn {
    /// The source's role.
    pub role: String,
    /// The file's path below its root, cut at `/`.
    pub segments: Vec<String>,
    /// The session an earlier record of the file named.
    pub session: Option<String>,
    /// The server names the harness's configuration gives it today.
    pub configured: Vec<String>,
    /// The record.
    pub record: String,
}

/// `server_setup`'s input: the stdio server a user would add.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SetupIn {
    /// Its name in the harness's configuration.
    pub name: String,
    /// Its command.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// Every answer: a value or a message.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireResult<T> {
    /// It worked.
    Ok(T),
    /// It did not (a panic included), with what to tell the user.
    Err(String),
}

// === Plugin side (used by `export_plugin!`) ===

#[doc(hidden)]
pub fn to_buf(bytes: Vec<u8>) -> TetherBuf {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    TetherBuf {
        ptr: bytes.as_mut_ptr(),
        len: bytes.len(),
        cap: bytes.capacity(),
    }
}

#[doc(hidden)]
pub extern "C" fn free_buf(buf: TetherBuf) {
    if !buf.ptr.is_null() {
        // SAFETY: the buffer came from `to_buf` in this same library.
        drop(unsafe { Vec::from_raw_parts(buf.ptr, buf.len, buf.cap) });
    }
}

fn answer<T: Serialize>(result: std::thread::Result<Result<T, String>>) -> TetherBuf {
    let wire = match result {
        Ok(Ok(value)) => WireResult::Ok(value),
        Ok(Err(message)) => WireResult::Err(message),
        Err(_) => WireResult::Err("the plugin panicked".into()),
    };
    to_buf(
        serde_json::to_vec(&wire).unwrap_or_else(|_| br#"{"err":"unencodable answer"}"#.to_vec()),
    )
}

fn input<'a, T: Deserialize<'a>>(ptr: *const u8, len: usize) -> Result<T, String> {
    if ptr.is_null() {
        return Err("null input".into());
    }
    // SAFETY: the host passes a live buffer of `len` bytes for the duration of the call.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    serde_json::from_slice(bytes).map_err(|e| format!("bad input: {e}"))
}

/// How the exported functions reach the plugin: built on first use, so the
/// constructor runs inside the same `catch_unwind` as the call (a panicking
/// constructor is an error answer, every time, never an abort of the host).
#[doc(hidden)]
pub type PluginGetter = fn() -> &'static dyn TransportObserver;

/// Runs `call` on the plugin, the plugin's construction included, with every
/// panic caught.
fn guarded<T: Serialize>(
    plugin: PluginGetter,
    call: impl FnOnce(&dyn TransportObserver) -> Result<T, String>,
) -> TetherBuf {
    answer(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || call(plugin()),
    )))
}

#[doc(hidden)]
pub fn plugin_describe(plugin: PluginGetter) -> TetherBuf {
    guarded(plugin, |plugin| {
        Ok(WireDescriptor {
            descriptor: plugin.descriptor(),
            passthrough: plugin.passthrough().map(|p| p.capabilities()),
            reports_servers: plugin.passthrough().is_some_and(|p| p.reports_servers()),
            reader: !carried(plugin.roles()).is_empty(),
            roles: Some(carried(plugin.roles())),
            records_verified_on: plugin.roles().records.and_then(|r| r.records_verified_on()),
        })
    })
}

/// The roles the table carries that `roles` has, by name.
fn carried(roles: Roles<'_>) -> Vec<String> {
    [
        ("records", roles.records.is_some()),
        ("telemetry", roles.telemetry.is_some()),
        ("setup", roles.setup.is_some()),
    ]
    .into_iter()
    .filter(|&(_, has)| has)
    .map(|(name, _)| name.to_owned())
    .collect()
}

#[doc(hidden)]
pub fn plugin_decide_all(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let DecideIn { servers, ctx } = input(ptr, len)?;
        Ok(plugin.decide_all(&servers, &ctx))
    })
}

#[doc(hidden)]
pub fn plugin_materialize(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let MaterializeIn { plan, ctx, dir } = input(ptr, len)?;
        let strategy = plugin.passthrough().ok_or("not a passthrough plugin")?;
        strategy.materialize(&plan, &ctx, &dir)
    })
}

#[doc(hidden)]
pub fn plugin_read_output(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let ObserveIn { line, at } = input(ptr, len)?;
        Ok(plugin
            .passthrough()
            .map(|p| p.read_output(&line, at))
            .unwrap_or_default())
    })
}

#[doc(hidden)]
pub fn plugin_telemetry_setup(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let TargetIn {
            endpoint,
            authorization,
        } = input(ptr, len)?;
        let target = TelemetryTarget {
            endpoint,
            authorization,
        };
        Ok(plugin
            .roles()
            .telemetry
            .and_then(|r| r.telemetry_setup(&target)))
    })
}

#[doc(hidden)]
pub fn plugin_read_telemetry(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let TelemetryIn { record, configured } = input(ptr, len)?;
        Ok(plugin
            .roles()
            .telemetry
            .map_or(TelemetryAnswer::NotMine, |r| {
                r.read_telemetry(&record, &configured)
            }))
    })
}

#[doc(hidden)]
pub fn plugin_record_sources(plugin: PluginGetter, _ptr: *const u8, _len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        Ok(plugin
            .roles()
            .records
            .map(|r| r.record_sources())
            .unwrap_or_default())
    })
}

#[doc(hidden)]
pub fn plugin_read_record(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let RecordIn {
            role,
            segments,
            session,
            configured,
            record,
        } = input(ptr, len)?;
        let file = tether_core::records::RecordFile {
            role: &role,
            segments: &segments,
            session: session.as_deref(),
            configured: &configured,
        };
        Ok(plugin
            .roles()
            .records
            .map_or(tether_core::records::RecordAnswer::Unknown, |r| {
                r.read_record(&file, &record)
            }))
    })
}

#[doc(hidden)]
pub fn plugin_server_setup(plugin: PluginGetter, ptr: *const u8, len: usize) -> TetherBuf {
    guarded(plugin, |plugin| {
        let SetupIn {
            name,
            command,
            args,
        } = input(ptr, len)?;
        Ok(plugin
            .roles()
            .setup
            .and_then(|r| r.server_setup(&name, &command, &args)))
    })
}

/// Exports a plugin from a `cdylib`: `export_plugin!(MyPlugin);` where the
/// expression builds the plugin (it must be `Send + Sync + 'static`).
#[macro_export]
macro_rules! export_plugin {
    ($build:expr) => {
        fn __tether_plugin() -> &'static dyn $crate::TransportObserver {
            static PLUGIN: ::std::sync::OnceLock<::std::boxed::Box<dyn $crate::TransportObserver>> =
                ::std::sync::OnceLock::new();
            PLUGIN
                .get_or_init(|| ::std::boxed::Box::new($build))
                .as_ref()
        }
        extern "C" fn __tether_describe() -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_describe(__tether_plugin)
        }
        extern "C" fn __tether_decide_all(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_decide_all(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_materialize(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_materialize(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_read_output(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_read_output(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_telemetry_setup(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_telemetry_setup(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_read_telemetry(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_read_telemetry(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_record_sources(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_record_sources(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_read_record(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_read_record(__tether_plugin, ptr, len)
        }
        extern "C" fn __tether_server_setup(
            ptr: *const u8,
            len: usize,
        ) -> $crate::dynamic::TetherBuf {
            $crate::dynamic::plugin_server_setup(__tether_plugin, ptr, len)
        }
        static __TETHER_TABLE: $crate::dynamic::TetherPluginV4 = $crate::dynamic::TetherPluginV4 {
            abi_version: $crate::dynamic::ABI_VERSION,
            describe: __tether_describe,
            decide_all: __tether_decide_all,
            materialize: __tether_materialize,
            read_output: __tether_read_output,
            telemetry_setup: __tether_telemetry_setup,
            read_telemetry: __tether_read_telemetry,
            record_sources: __tether_record_sources,
            read_record: __tether_read_record,
            server_setup: __tether_server_setup,
            free_buf: $crate::dynamic::free_buf,
        };
        /// The Tether plugin entry point.
        #[unsafe(no_mangle)]
        pub extern "C" fn tether_plugin_entry() -> *const $crate::dynamic::TetherPluginV4 {
            &__TETHER_TABLE
        }
    };
}

// === Host side ===

/// Why a plugin library could not be loaded. The host stays up.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file is not a loadable library.
    #[error("cannot load plugin library {path}: {reason}")]
    Library {
        /// The path given.
        path: String,
        /// The loader's reason.
        reason: String,
    },
    /// It has no `tether_plugin_entry`.
    #[error("{path} is not a Tether plugin: it exports no tether_plugin_entry")]
    NoEntry {
        /// The path given.
        path: String,
    },
    /// It was built against another ABI.
    #[error(
        "{path} was built for Tether plugin ABI {found}, this Tether speaks ABI {expected}; rebuild it against a matching tether-sdk"
    )]
    AbiMismatch {
        /// The path given.
        path: String,
        /// What it declared.
        found: u32,
        /// What this host speaks.
        expected: u32,
    },
    /// It answered `describe` with an error or garbage.
    #[error("{path} did not describe itself: {reason}")]
    Describe {
        /// The path given.
        path: String,
        /// Why.
        reason: String,
    },
}

/// A plugin living in a loaded library (never unloaded).
pub struct DynamicPlugin {
    table: &'static TetherPluginV4,
    described: WireDescriptor,
}

impl std::fmt::Debug for DynamicPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicPlugin")
            .field("descriptor", &self.described.descriptor)
            .finish_non_exhaustive()
    }
}

impl DynamicPlugin {
    fn call<T: for<'de> Deserialize<'de>>(
        &self,
        function: extern "C" fn(*const u8, usize) -> TetherBuf,
        input: &impl Serialize,
    ) -> Result<T, String> {
        let bytes = serde_json::to_vec(input).map_err(|e| e.to_string())?;
        let buf = function(bytes.as_ptr(), bytes.len());
        self.take(buf)
    }

    fn take<T: for<'de> Deserialize<'de>>(&self, buf: TetherBuf) -> Result<T, String> {
        if buf.ptr.is_null() {
            return Err("the plugin returned nothing".into());
        }
        // SAFETY: the plugin returned a live buffer of `len` bytes, ours until `free_buf`.
        let bytes = unsafe { std::slice::from_raw_parts(buf.ptr, buf.len) }.to_vec();
        (self.table.free_buf)(buf);
        match serde_json::from_slice::<WireResult<T>>(&bytes) {
            Ok(WireResult::Ok(value)) => Ok(value),
            Ok(WireResult::Err(message)) => Err(message),
            Err(e) => Err(format!("unreadable answer from the plugin: {e}")),
        }
    }
}

impl TransportObserver for DynamicPlugin {
    fn descriptor(&self) -> PluginDescriptor {
        self.described.descriptor.clone()
    }

    fn decide(&self, server: &ServerSpec, ctx: &PlanContext) -> Decision {
        self.decide_all(std::slice::from_ref(server), ctx)
            .into_iter()
            .next()
            .map(|(_, d)| d)
            .unwrap_or_else(|| {
                Decision::unavailable(
                    ReasonCode::ObserverOmitted,
                    "the plugin returned no decision",
                )
            })
    }

    fn decide_all(&self, servers: &[ServerSpec], ctx: &PlanContext) -> Vec<(String, Decision)> {
        let input = DecideIn {
            servers: servers.to_vec(),
            ctx: ctx.clone(),
        };
        // A failed call answers nothing; the core records observer_omitted.
        self.call::<Vec<(String, Decision)>>(self.table.decide_all, &input)
            .unwrap_or_default()
    }

    fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
        self.described
            .passthrough
            .map(|_| self as &dyn PassthroughStrategy)
    }

    fn roles(&self) -> Roles<'_> {
        let has = |role: &str| match &self.described.roles {
            Some(roles) => roles.iter().any(|r| r == role),
            None => self.described.reader,
        };
        let mut roles = Roles::none();
        if has("records") {
            roles = roles.records(self);
        }
        if has("telemetry") {
            roles = roles.telemetry(self);
        }
        if has("setup") {
            roles = roles.setup(self);
        }
        roles
    }
}

impl PassthroughStrategy for DynamicPlugin {
    fn capabilities(&self) -> AgentCapabilities {
        self.described.passthrough.unwrap_or_default()
    }

    fn materialize(
        &self,
        plan: &Plan,
        ctx: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String> {
        let input = MaterializeIn {
            plan: plan.clone(),
            ctx: ctx.clone(),
            dir: dir.to_path_buf(),
        };
        self.call(self.table.materialize, &input)
    }

    fn read_output(&self, line: &str, at: Timestamp) -> Vec<Evidence> {
        let input = ObserveIn {
            line: line.to_owned(),
            at,
        };
        self.call(self.table.read_output, &input)
            .unwrap_or_default()
    }

    fn reports_servers(&self) -> bool {
        self.described.reports_servers
    }
}

impl TelemetryReader for DynamicPlugin {
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        let input = TargetIn {
            endpoint: target.endpoint.clone(),
            authorization: target.authorization.clone(),
        };
        self.call::<Option<TelemetrySetup>>(self.table.telemetry_setup, &input)
            .ok()
            .flatten()
    }

    fn read_telemetry(&self, record: &TelemetryRecord, configured: &[String]) -> TelemetryAnswer {
        let input = TelemetryIn {
            record: record.clone(),
            configured: configured.to_vec(),
        };
        // A failed call (a panic included) reads nothing of the record.
        self.call(self.table.read_telemetry, &input)
            .unwrap_or(TelemetryAnswer::Ignored)
    }
}

impl RecordReader for DynamicPlugin {
    fn record_sources(&self) -> Vec<tether_core::records::RecordSource> {
        self.call(self.table.record_sources, &serde_json::json!({}))
            .unwrap_or_default()
    }

    fn read_record(
        &self,
        file: &tether_core::records::RecordFile<'_>,
        record: &str,
    ) -> tether_core::records::RecordAnswer {
        let input = RecordIn {
            role: file.role.to_owned(),
            segments: file.segments.to_vec(),
            session: file.session.map(str::to_owned),
            configured: file.configured.to_vec(),
            record: record.to_owned(),
        };
        // A failed call (a panic included) reads nothing of the record: it
        // is counted as one of a kind the plugin does not know.
        self.call(self.table.read_record, &input)
            .unwrap_or(tether_core::records::RecordAnswer::Unknown)
    }

    fn records_verified_on(&self) -> Option<tether_core::records::VerifiedRange> {
        self.described.records_verified_on.clone()
    }
}

impl SetupGuide for DynamicPlugin {
    fn server_setup(&self, name: &str, command: &str, args: &[String]) -> Option<ServerSetup> {
        let input = SetupIn {
            name: name.to_owned(),
            command: command.to_owned(),
            args: args.to_vec(),
        };
        self.call::<Option<ServerSetup>>(self.table.server_setup, &input)
            .ok()
            .flatten()
    }
}

/// Loads a plugin library. The ABI version is checked before anything else is
/// called; the library is never unloaded.
pub fn load(path: &Path) -> Result<Arc<DynamicPlugin>, LoadError> {
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(LoadError::Library {
            path: shown,
            reason: "no such file".into(),
        });
    }
    // SAFETY: loading runs the library's initializers; that is what loading a plugin means.
    let library =
        unsafe { libloading::Library::new(OsStr::new(path)) }.map_err(|e| LoadError::Library {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
    // Never unloaded: code and statics of the plugin live as long as the process.
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    // SAFETY: the symbol's type is the documented entry point signature.
    let entry: libloading::Symbol<'static, extern "C" fn() -> *const TetherPluginV4> =
        unsafe { library.get(ENTRY_SYMBOL) }.map_err(|_| LoadError::NoEntry {
            path: shown.clone(),
        })?;
    let table_ptr = entry();
    if table_ptr.is_null() {
        return Err(LoadError::NoEntry { path: shown });
    }
    // Read only the first field until the version is known to match.
    // SAFETY: every ABI version's table starts with a u32 version.
    let found = unsafe { std::ptr::read(table_ptr.cast::<u32>()) };
    if found != ABI_VERSION {
        return Err(LoadError::AbiMismatch {
            path: shown,
            found,
            expected: ABI_VERSION,
        });
    }
    // SAFETY: the version matches, so the table has this layout, in static memory.
    let table: &'static TetherPluginV4 = unsafe { &*table_ptr };
    let probe = DynamicPlugin {
        table,
        described: WireDescriptor {
            descriptor: PluginDescriptor::new(
                String::new(),
                Vec::<String>::new(),
                tether_core::DriveMode::Passthrough,
                String::new(),
            ),
            passthrough: None,
            reports_servers: false,
            reader: false,
            roles: None,
            records_verified_on: None,
        },
    };
    let described: WireDescriptor =
        probe
            .take((table.describe)())
            .map_err(|reason| LoadError::Describe {
                path: shown,
                reason,
            })?;
    Ok(Arc::new(DynamicPlugin { table, described }))
}
