//! Where a bench's tool calls go: the dispatcher in process, or a running
//! daemon's REST route for the same tool.

use mentisdb_core::MentisDb;
use serde_json::Value;
use std::time::Duration;

/// The dispatcher in process, or a daemon's REST routes.
pub enum Target {
    /// [`MentisDb::call`] on an engine of the bench's own.
    InProcess(Box<MentisDb>),
    /// `POST {base}{route}` with the arguments as the JSON body.
    Rest {
        /// `http://HOST:PORT`, no trailing slash.
        base: String,
        /// One client, so connections are kept alive between calls.
        client: reqwest::blocking::Client,
    },
}

impl Target {
    /// A daemon at `base` (`http://HOST:PORT`).
    pub fn rest(base: &str) -> Target {
        let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(120)).build().expect("an HTTP client");
        Target::Rest { base: base.trim_end_matches('/').to_string(), client }
    }

    /// Calls `tool` in process, or `POST route` over REST; an error is the
    /// tool's message or the HTTP status with the reply's body.
    pub fn call(&self, tool: &str, route: &str, args: Value) -> Result<Value, String> {
        match self {
            Target::InProcess(db) => db.call(tool, args).map_err(|e| e.to_string()),
            Target::Rest { base, client } => {
                let reply = client.post(format!("{base}{route}")).json(&args).send().map_err(|e| format!("POST {route}: {e}"))?;
                let status = reply.status();
                let body: Value = reply.json().map_err(|e| format!("POST {route}: {e}"))?;
                if status.is_success() {
                    Ok(body)
                } else {
                    Err(format!("POST {route}: HTTP {status}: {body}"))
                }
            }
        }
    }
}
