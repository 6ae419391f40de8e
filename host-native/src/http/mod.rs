//! The daemon's HTTP face: the REST API and MCP over streamable HTTP, and
//! everything in front of them.
//!
//! - [`routes`]: the REST route table (method, path, tool, reply form);
//!   [`rest`] serves it, [`openapi`] documents it as `/openapi.json`.
//! - [`mcp`]: the MCP server (rmcp), over HTTP here and over stdio for `--stdio`;
//!   [`legacy`]: MentisDB 0.10's CloudLLM `/tools/list` and `/tools/execute`.
//! - [`events`]: `GET /v1/events` (Server-Sent Events); [`explorer`]: the
//!   browser page at `/explorer`.
//! - [`auth`]: the token middleware and [`auth::call_as`], the one call path
//!   of every transport; [`api_error`]: the one way a REST failure leaves.
//! - [`web_guard`] (Host, Origin and CORS rules) and [`body_limit`] (request
//!   bodies over the limit or left unread) stand in front of every listener;
//!   [`serve`] is every listener's accept loop (connection cap, header and
//!   handshake timeouts), [`peer_user`] who is calling on each connection.
//!
//! Nothing here holds tool logic: every request ends in
//! [`mentisdb_core::MentisDb::call`], behind the access rule of [`crate::tokens`].

pub mod api_error;
pub mod auth;
pub mod body_limit;
pub mod events;
pub mod explorer;
pub mod legacy;
pub mod mcp;
pub mod openapi;
pub mod peer_user;
pub mod rest;
pub mod routes;
pub mod serve;
pub mod web_guard;
