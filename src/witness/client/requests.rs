//! The one-shot requests of `verify`: a run's record fetched from the witness, and the runs
//! it holds.

use super::thread::open;
use crate::witness::proto::{read_msg, write_msg, Key, Msg, RunInfo};

/// Most bytes of a fetched record (the journal's own bound).
const MAX_RECORD: usize = 256 << 20;

/// The witness's record of `run_id` (journal records; `None`: it holds none) and its last
/// batch.
pub fn fetch(addr: &str, key: &Key, run_id: u64) -> anyhow::Result<Option<(Vec<u8>, u64)>> {
    let mut s = open(addr).map_err(|e| anyhow::anyhow!("witness {e}"))?;
    // Each read waits at most TIMEOUT; a record of many chunks takes longer in all.
    write_msg(&mut s, key, &Msg::Fetch { run_id })
        .map_err(|e| anyhow::anyhow!("witness {addr}: {e}"))?;
    let mut data = Vec::new();
    loop {
        match read_msg(&mut s, key) {
            Ok(Msg::Data { data: d }) => {
                if data.len() + d.len() > MAX_RECORD {
                    anyhow::bail!(
                        "witness {addr}: the record of run {run_id:016x} is larger than {MAX_RECORD} bytes"
                    );
                }
                data.extend_from_slice(&d);
            }
            Ok(Msg::Ack { seq }) => {
                return Ok((seq != 0 || !data.is_empty()).then_some((data, seq)));
            }
            Ok(Msg::Error { text }) => anyhow::bail!("witness {addr} refused: {text}"),
            Ok(m) => anyhow::bail!("witness {addr}: unexpected answer {m:?}"),
            Err(e) => anyhow::bail!("witness {addr}: {e}"),
        }
    }
}

/// The runs the witness holds.
pub fn list(addr: &str, key: &Key) -> anyhow::Result<Vec<RunInfo>> {
    let mut s = open(addr).map_err(|e| anyhow::anyhow!("witness {e}"))?;
    write_msg(&mut s, key, &Msg::List).map_err(|e| anyhow::anyhow!("witness {addr}: {e}"))?;
    match read_msg(&mut s, key) {
        Ok(Msg::Listed { runs }) => Ok(runs),
        Ok(Msg::Error { text }) => anyhow::bail!("witness {addr} refused: {text}"),
        Ok(m) => anyhow::bail!("witness {addr}: unexpected answer {m:?}"),
        Err(e) => anyhow::bail!("witness {addr}: {e}"),
    }
}
