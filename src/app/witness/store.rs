//! The records and the runs being written: a run's record loaded or made, and a batch taken
//! into it (appended and synced, or a base written to a temporary and renamed over it), with
//! what is refused before anything is written.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use crate::sync::Mutex;

use super::record::{entry, header, name_of, read_record};
use crate::io::safefile::{Create, Dir, Use};
use crate::sim::engine::journal::{decode, Record};
use crate::witness::proto::{BASE, GAP, MORE, PART};

/// The records, and the runs being written.
pub(super) struct Store {
    pub(super) dir: Dir,
    pub(super) runs: Mutex<HashMap<u64, Arc<Mutex<RunRec>>>>,
}

/// One run's record.
pub(super) struct RunRec {
    run_id: u64,
    host: String,
    /// The committed record (none before its first base).
    pub(super) file: Option<File>,
    pub(super) len: u64,
    pub(super) last_seq: u64,
    gaps: u64,
    /// The gaps a base being received records.
    base_gaps: u64,
    /// A base being received: its temporary's name and file, last chunk, bytes.
    temp: Option<(OsString, File, u64)>,
}

/// A run is written only by the host that reported it first.
fn same_host(run_id: u64, recorded: &str, host: Option<&str>) -> anyhow::Result<()> {
    match host {
        Some(h) if h != recorded => {
            anyhow::bail!("run {run_id:016x} is reported by host {recorded}; refusing it from {h}")
        }
        _ => Ok(()),
    }
}

impl Store {
    /// The record of `run_id`, loaded (cut after its last whole entry) or new.
    pub(super) fn get(
        &self,
        run_id: u64,
        host: Option<&str>,
    ) -> anyhow::Result<Arc<Mutex<RunRec>>> {
        let mut runs = self.runs.lock();
        if let Some(r) = runs.get(&run_id) {
            let r = Arc::clone(r);
            drop(runs);
            same_host(run_id, &r.lock().host, host)?;
            return Ok(r);
        }
        let name = name_of(run_id);
        let rec = match read_record(&self.dir, &name)? {
            Some(p) => {
                if p.run_id != run_id {
                    anyhow::bail!(
                        "{}: holds run {:016x}",
                        self.dir.join(&name).display(),
                        p.run_id
                    );
                }
                same_host(run_id, &p.host, host)?;
                let file = self.dir.open_file(&name, Create::Existing, Use::Own)?;
                if file.metadata()?.len() > p.whole {
                    file.set_len(p.whole)?;
                    file.sync_data()?;
                }
                RunRec {
                    run_id,
                    host: p.host,
                    file: Some(file),
                    len: p.whole,
                    last_seq: p.last_seq,
                    gaps: p.gaps,
                    base_gaps: p.gaps,
                    temp: None,
                }
            }
            None => {
                let Some(h) = host else {
                    anyhow::bail!("no record of run {run_id:016x}");
                };
                RunRec {
                    run_id,
                    host: h.to_string(),
                    file: None,
                    len: 0,
                    last_seq: 0,
                    gaps: 0,
                    base_gaps: 0,
                    temp: None,
                }
            }
        };
        let r = Arc::new(Mutex::new(rec));
        runs.insert(run_id, Arc::clone(&r));
        Ok(r)
    }
}

impl RunRec {
    /// Takes a batch; the sequence number to acknowledge, if any (a base's chunks before
    /// its last are not acknowledged). Nothing is written for a refused batch.
    pub(super) fn take(
        &mut self,
        dir: &Dir,
        seq: u64,
        flags: u8,
        data: &[u8],
    ) -> anyhow::Result<Option<u64>> {
        if flags & (BASE | PART) == 0 && seq <= self.last_seq {
            return Ok(Some(self.last_seq));
        }
        check_records(self.run_id, flags, data)?;
        if flags & BASE != 0 {
            if seq <= self.last_seq {
                anyhow::bail!(
                    "a base numbered {seq}, not after the last batch {}",
                    self.last_seq
                );
            }
            if let Some((name, _, _)) = self.temp.take() {
                let _ = dir.unlink(&name);
            }
            let gaps = self.gaps + u64::from(flags & GAP != 0);
            self.base_gaps = gaps;
            let (name, mut f) = dir.new_temp(
                &OsString::from(format!(".{:016x}.witness.", self.run_id)),
                "",
                0o600,
            )?;
            f.write_all(&header(self.run_id, &self.host, gaps))?;
            f.write_all(&entry(seq, flags, data))?;
            self.temp = Some((name, f, seq));
        } else if flags & PART != 0 {
            match &mut self.temp {
                Some((_, f, last)) if *last + 1 == seq => {
                    f.write_all(&entry(seq, flags, data))?;
                    *last = seq;
                }
                _ => anyhow::bail!("part {seq} of a base whose start was not received"),
            }
        } else {
            let Some(f) = self.file.as_mut() else {
                anyhow::bail!("batch {seq} before the run's first base");
            };
            if seq != self.last_seq + 1 {
                anyhow::bail!("batch {seq} after batch {} without a base", self.last_seq);
            }
            let e = entry(seq, flags, data);
            f.seek(SeekFrom::Start(self.len))?;
            f.write_all(&e)?;
            f.sync_data()?;
            self.len += e.len() as u64;
            self.last_seq = seq;
            return Ok(Some(seq));
        }
        if flags & MORE != 0 {
            return Ok(None);
        }
        // The base's last chunk: durable, then in place of the record.
        let Some((name, f, last)) = self.temp.take() else {
            anyhow::bail!("a base without its start");
        };
        f.sync_all()?;
        dir.rename(&name, &name_of(self.run_id))?;
        dir.sync()?;
        self.len = f.metadata()?.len();
        self.file = Some(f);
        self.last_seq = last;
        self.gaps = self.base_gaps;
        Ok(Some(last))
    }
}

/// The batch's bytes must be whole journal records; a base's first chunk begins with the
/// Start of this run, and no other batch holds a Start.
fn check_records(run_id: u64, flags: u8, data: &[u8]) -> anyhow::Result<()> {
    let d = decode(data);
    if let Some(dmg) = d.damage {
        anyhow::bail!("records that are not whole journal records ({dmg})");
    }
    let first_start = flags & BASE != 0;
    for (i, r) in d.records.iter().enumerate() {
        if let Record::Start { run_id: id, .. } = r {
            if !(first_start && i == 0) {
                anyhow::bail!("a Start record outside the start of a base");
            }
            if *id != run_id {
                anyhow::bail!("a base of run {id:016x} sent for run {run_id:016x}");
            }
        }
    }
    if first_start && !matches!(d.records.first(), Some(Record::Start { .. })) {
        anyhow::bail!("a base that does not begin with its Start record");
    }
    Ok(())
}
