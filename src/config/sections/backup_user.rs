//! `[BackupUser]`: a full database backup while the other users run (issue #25 §1), as
//! `BACKUP DATABASE … WITH CHECKSUM, MAXTRANSFERSIZE = …, BUFFERCOUNT = …` does it: every page
//! of every data file read sequentially in MaxTransferSize chunks, BufferCount reads in
//! flight, each page checked as it is read, and a backup stream written in large sequential
//! writes; then `RESTORE VERIFYONLY` reads the stream back. Not a section of Microsoft's
//! SQLIOSim: `UserCount` defaults to 0, so its sample configurations run unchanged.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;
use crate::config::save;

/// SQL Server's MAXTRANSFERSIZE default, 1 MB.
pub const DEFAULT_TRANSFER: u32 = 1 << 20;
/// SQL Server's MAXTRANSFERSIZE bounds and step: 64 KB to 4 MB, a multiple of 64 KB.
pub const TRANSFER_STEP: u32 = 64 << 10;
/// The largest MAXTRANSFERSIZE SQL Server accepts, 4 MB.
pub const MAX_TRANSFER: u32 = 4 << 20;
/// The transfer size SQL Server's restore from a disk device chooses when its RESTORE names no
/// MAXTRANSFERSIZE, 64 KB (Microsoft CSS, "How It Works: How does SQL Server Backup and
/// Restore select transfer sizes": "backup to disk choose[s] a transfer size of 1MB but
/// restore 64K unless I specify BUFFERCOUNT and MAXTRANSFERSIZE").
pub const DEFAULT_RESTORE_TRANSFER: u32 = 64 << 10;

/// `[BackupUser]`: a full backup of the data files, then a verify-only pass over the stream.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BackupUser {
    /// `UserCount`: 0 (none, the default) or 1: SQL Server runs one backup of a database at a
    /// time.
    pub user_count: u32,
    /// `MaxTransferSize`: bytes per read of a data file and per stream write, default
    /// 1048576; 65536..=4194304, a multiple of 65536.
    pub max_transfer_size: u32,
    /// `BufferCount`: reads in flight, default 6 (SQL Server's formula for one device and
    /// one volume: 1×3 + 1 + 2×1); 1..=64.
    pub buffer_count: u32,
    /// `BackupDelay`: pause in ms after each backup, default 5000.
    pub backup_delay_ms: u32,
    /// `BackupFile`: the stream's path; empty (the default) = beside the first data file, its
    /// name with the extension replaced by `.bak`. A relative path is taken from the first
    /// data file's folder.
    pub backup_file: String,
    /// `VerifyOnly`: read the stream back and check it after each backup (`RESTORE
    /// VERIFYONLY`), default TRUE.
    pub verify_only: bool,
    /// `RestoreAfterBackup`: after each backup, write a restored copy of the data files from
    /// the stream and check it, default FALSE.
    pub restore_after_backup: bool,
    /// `RestoreMaxTransferSize`: bytes per write of a restored copy (RESTORE's own
    /// MAXTRANSFERSIZE), default 65536, SQL Server's for a restore from disk;
    /// 65536..=4194304, a multiple of 65536.
    pub restore_max_transfer_size: u32,
    /// `RestoreBufferCount`: writes of a restored copy in flight (RESTORE's own BUFFERCOUNT),
    /// default 6 (the formula of `BufferCount`); 1..=64.
    pub restore_buffer_count: u32,
    /// `InstantFileInitialization`: the restore's copies are not zeroed before their pages are
    /// written (SQL Server with SE_MANAGE_VOLUME_NAME granted), default FALSE: zeroed, as SQL
    /// Server's restore zeroes data files without the privilege.
    pub instant_file_initialization: bool,
    /// `LogBackupInterval`: ms between log backups (`BACKUP LOG`, a `.trn` stream beside the
    /// backup stream), 0 (the default) for none; while log backups are taken the log may not
    /// reuse space none has read yet. 0 or 100..=3600000.
    pub log_backup_interval_ms: u32,
}

impl IniSection for BackupUser {
    const NAME: &'static str = "BackupUser";
    const KEYS: &'static [&'static str] = &[
        "UserCount",
        "MaxTransferSize",
        "BufferCount",
        "BackupDelay",
        "BackupFile",
        "VerifyOnly",
        "RestoreAfterBackup",
        "RestoreMaxTransferSize",
        "RestoreBufferCount",
        "InstantFileInitialization",
        "LogBackupInterval",
    ];

    fn parse(v: &View, _cx: &mut ParseContext) -> Result<Self, ConfigError> {
        let b = BackupUser {
            user_count: v.u32("UserCount", 0, 0, 1)?,
            max_transfer_size: v.u32(
                "MaxTransferSize",
                DEFAULT_TRANSFER,
                TRANSFER_STEP,
                MAX_TRANSFER,
            )?,
            buffer_count: v.u32("BufferCount", 6, 1, 64)?,
            backup_delay_ms: v.u32("BackupDelay", 5000, 0, u32::MAX)?,
            backup_file: v
                .entry("BackupFile")
                .map(|e| e.value.clone())
                .unwrap_or_default(),
            verify_only: v.boolean("VerifyOnly", true)?,
            restore_after_backup: v.boolean("RestoreAfterBackup", false)?,
            restore_max_transfer_size: v.u32(
                "RestoreMaxTransferSize",
                DEFAULT_RESTORE_TRANSFER,
                TRANSFER_STEP,
                MAX_TRANSFER,
            )?,
            restore_buffer_count: v.u32("RestoreBufferCount", 6, 1, 64)?,
            instant_file_initialization: v.boolean("InstantFileInitialization", false)?,
            log_backup_interval_ms: v.u32("LogBackupInterval", 0, 0, 3_600_000)?,
        };
        if let Some(e) = v.entry("LogBackupInterval") {
            if (1..100).contains(&b.log_backup_interval_ms) {
                return Err(v.bad(
                    e,
                    "0 (no log backups) or 100 to 3600000 ms between log backups",
                ));
            }
        }
        for (key, bytes) in [
            ("MaxTransferSize", b.max_transfer_size),
            ("RestoreMaxTransferSize", b.restore_max_transfer_size),
        ] {
            if let Some(e) = v.entry(key) {
                if !bytes.is_multiple_of(TRANSFER_STEP) {
                    return Err(v.bad(
                        e,
                        "a multiple of 65536 (64 KB) from 65536 to 4194304 (4 MB), as SQL \
                         Server's MAXTRANSFERSIZE",
                    ));
                }
            }
        }
        Ok(b)
    }
}

impl SectionValue for BackupUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            ("MaxTransferSize", self.max_transfer_size.to_string()),
            ("BufferCount", self.buffer_count.to_string()),
            ("BackupDelay", self.backup_delay_ms.to_string()),
            ("BackupFile", self.backup_file.clone()),
            ("VerifyOnly", save::flag(self.verify_only)),
            ("RestoreAfterBackup", save::flag(self.restore_after_backup)),
            (
                "RestoreMaxTransferSize",
                self.restore_max_transfer_size.to_string(),
            ),
            ("RestoreBufferCount", self.restore_buffer_count.to_string()),
            (
                "InstantFileInitialization",
                save::flag(self.instant_file_initialization),
            ),
            ("LogBackupInterval", self.log_backup_interval_ms.to_string()),
        ]
    }

    /// Shown (and counted) only when on, so the echo of Microsoft's samples is unchanged.
    fn user_count(&self) -> Option<u32> {
        (self.user_count > 0).then_some(self.user_count)
    }
}
