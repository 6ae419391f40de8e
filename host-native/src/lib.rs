//! Native host: file storage and the `mentisdbd` daemon (see issue 4).
