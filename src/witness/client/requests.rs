//! The one-shot requests of `verify`: a run's record fetched from the witness, and the runs
//! it holds.

use super::thread::open;
use crate::witness::proto::{read_msg, write_msg, Key, Msg, RunInfo};
use crate::witness::WitnessError;

/// Most bytes of a fetched record (the journal's own bound).
const MAX_RECORD: usize = 256 << 20;

/// The witness's record of `run_id` (journal records; `None`: it holds none) and its last
/// batch.
pub fn fetch(addr: &str, key: &Key, run_id: u64) -> Result<Option<(Vec<u8>, u64)>, WitnessError> {
    let mut s = open(addr).map_err(WitnessError::Unreachable)?;
    // Each read waits at most TIMEOUT; a record of many chunks takes longer in all.
    write_msg(&mut s, key, &Msg::Fetch { run_id }).map_err(|e| WitnessError::talk(addr, e))?;
    let mut data = Vec::new();
    loop {
        match read_msg(&mut s, key) {
            Ok(Msg::Data { data: d }) => {
                if data.len() + d.len() > MAX_RECORD {
                    return Err(WitnessError::TooLarge {
                        addr: addr.to_string(),
                        run_id,
                        max: MAX_RECORD,
                    });
                }
                data.extend_from_slice(&d);
            }
            Ok(Msg::Ack { seq }) => {
                return Ok((seq != 0 || !data.is_empty()).then_some((data, seq)));
            }
            Ok(Msg::Error { text }) => {
                return Err(WitnessError::Refused {
                    addr: addr.to_string(),
                    text,
                })
            }
            Ok(m) => return Err(WitnessError::talk(addr, format!("unexpected answer {m:?}"))),
            Err(e) => return Err(WitnessError::talk(addr, e)),
        }
    }
}

/// The runs the witness holds.
pub fn list(addr: &str, key: &Key) -> Result<Vec<RunInfo>, WitnessError> {
    let mut s = open(addr).map_err(WitnessError::Unreachable)?;
    write_msg(&mut s, key, &Msg::List).map_err(|e| WitnessError::talk(addr, e))?;
    match read_msg(&mut s, key) {
        Ok(Msg::Listed { runs }) => Ok(runs),
        Ok(Msg::Error { text }) => Err(WitnessError::Refused {
            addr: addr.to_string(),
            text,
        }),
        Ok(m) => Err(WitnessError::talk(addr, format!("unexpected answer {m:?}"))),
        Err(e) => Err(WitnessError::talk(addr, e)),
    }
}
