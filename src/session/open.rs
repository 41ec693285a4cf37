//! Starting a session for a front end: a new one, or a resumed one whose
//! conversation is rebuilt and whose file is appended to.

use super::record::{Meta, Record, VERSION};
use super::store::{self, SessionError, Writer};
use crate::config::Config;
use crate::provider::Message;

pub struct Opened {
    pub writer: Writer,
    /// The conversation to continue (empty for a new session).
    pub history: Vec<Message>,
    /// The full record, for the transcript views.
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
}

pub fn open(config: &Config, resume: Option<&str>) -> Result<Opened, SessionError> {
    let dir = &config.sessions_dir;
    match resume {
        None => {
            let id = store::new_id();
            let secs =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            let meta = Meta {
                v: VERSION,
                id,
                created: store::timestamp(secs, false),
                cwd: config.workspace.display().to_string(),
                provider: config.provider.name.clone(),
                model: config.provider.model.clone(),
                hew_version: env!("CARGO_PKG_VERSION").to_owned(),
            };
            Ok(Opened {
                writer: Writer::new(dir, meta),
                history: Vec::new(),
                records: Vec::new(),
                warnings: Vec::new(),
            })
        }
        Some(wanted) => {
            let path = store::resolve(dir, wanted, &config.workspace)?;
            let loaded = store::load(&path)?;
            let history = super::resume::conversation(&loaded.records);
            let writer = Writer::resume(path, loaded.meta.id.clone());
            Ok(Opened { writer, history, records: loaded.records, warnings: loaded.warnings })
        }
    }
}
