//! The EXAMPLES section of every man page `sqliosim man` writes, one entry per page (keyed by
//! its name, `sqliosim-bench` for sqliosim-bench.1). A test generates the pages and fails on one
//! without examples.

/// (page name, [(what it does, the command line)]).
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    ("sqliosim", &[
        ("A 60-second simulation in ./sqliosim-data/:", "sqliosim run"),
        ("SQLIOSim's command line, as existing scripts type it:",
         "sqliosim -cfg configs/sqliosim.default.cfg.ini -dir /mnt/d1 -d 300 -log run.log.xml"),
        ("After a crash or power cut, what did the device lose?", "sqliosim verify --dir /mnt/dut"),
        ("The evidence of a run, in the terminal and as HTML:",
         "sqliosim report /mnt/dut/sqliosim.log.xml --html report.html"),
    ]),
    ("sqliosim-run", &[
        ("A run with a fixed seed, a JSON summary and an evidence bundle:",
         "sqliosim run --config configs/quick.cfg.ini --dir /mnt/dut --duration 30s --seed 42 --json run.json --bundle evidence.tar.gz"),
        ("Verify what a crash left, then carry on:",
         "sqliosim run --resume --config configs/quick.cfg.ini --dir /mnt/dut"),
        ("A burn-in whose journal batches also go to an off-host witness:",
         "sqliosim run --config configs/quick.cfg.ini --dir /mnt/dut --witness witness01:7468 --witness-token-file /etc/sqliosim/token"),
        ("The I/O from each thread itself instead of through io_uring:",
         "sqliosim run --config configs/quick.cfg.ini --dir /mnt/dut --engine sync"),
    ]),
    ("sqliosim-bench", &[
        ("Random 8 KB reads over a matrix of threads and queue depths:",
         "sqliosim bench --file /mnt/dut/bench.dat --size 2G --block-size 8K --pattern random --rw read --threads 1,2,4 --outstanding 1,4,16,32 --duration 10"),
        ("Read a raw device as it is:",
         "sqliosim bench --file /dev/nvme1n1 --rw read --pattern random --outstanding 32 --duration 30"),
    ]),
    ("sqliosim-sqlio", &[
        ("Random 8 KB reads, 4 threads, 8 outstanding each, for 30 s, with latencies:",
         "sqliosim sqlio -kR -t4 -o8 -b8 -frandom -s30 -LS -BN /mnt/dut/testfile.dat"),
        ("A script's Windows path, its drive mapped to a directory:",
         "sqliosim sqlio --drive-map E=/mnt/dut -kW -s60 -b64 -fsequential E:\\testfile.dat"),
        ("Files and threads from a parameter file:", "sqliosim sqlio -kR -s30 -Fparam.txt"),
    ]),
    ("sqliosim-diskspd", &[
        ("A 2 GiB target, 30 s, random, 30% writes, 4 threads of 8 outstanding 8K I/Os, no cache, latencies:",
         "sqliosim diskspd -c2G -d30 -r -w30 -t4 -o8 -b8K -Sh -L /mnt/dut/testfile.dat"),
        ("The same switches as Windows scripts type them, XML output:",
         "sqliosim diskspd /c1G /d10 /r /b4K /Rxml /mnt/dut/testfile.dat"),
    ]),
    ("sqliosim-report", &[
        ("A run's verdict in the terminal and an HTML report:",
         "sqliosim report /mnt/dut/sqliosim.log.xml --html report.html"),
        ("Many hosts, one verdict, with JUnit for CI:",
         "sqliosim report results/ --expect-hosts inventory.txt --html fleet.html --junit junit.xml"),
        ("A power-cut campaign (a directory holding campaign.json), one row per host per cut:",
         "sqliosim report campaign/ --html campaign.html --junit junit.xml"),
    ]),
    ("sqliosim-verify", &[
        ("Check every page of a file set against its journal:", "sqliosim verify --dir /mnt/dut"),
        ("The journal on another device:", "sqliosim verify --dir /mnt/dut --journal-dir /var/tmp/j"),
        ("The summary as JSON:", "sqliosim verify --dir /mnt/dut --json - | jq .outcome"),
        ("After a power pull, held to the off-host witness's record too:",
         "sqliosim verify --dir /mnt/dut --witness witness01:7468 --witness-token-file /etc/sqliosim/token"),
    ]),
    ("sqliosim-witness", &[
        ("Keep every run's durable acknowledgements off the hosts under test:",
         "sqliosim witness --listen 0.0.0.0:7468 --dir /var/lib/sqliosim-witness --token-file /etc/sqliosim/token"),
        ("What it holds:", "sqliosim witness --dir /var/lib/sqliosim-witness --list"),
    ]),
    ("sqliosim-restore", &[
        ("Restore the last finished backup into copies beside it, and check every page:",
         "sqliosim restore /mnt/dut/sqliosim.bak"),
        ("The copies on another device, over those an earlier restore left:",
         "sqliosim restore /mnt/dut/sqliosim.bak --to /mnt/other"),
    ]),
    ("sqliosim-selftest", &[
        ("Prove the detectors on this machine and build:", "sqliosim selftest"),
    ]),
    ("sqliosim-completions", &[
        ("Bash completions for this user:",
         "sqliosim completions bash > ~/.local/share/bash-completion/completions/sqliosim"),
        ("Zsh, into a directory on $fpath:", "sqliosim completions zsh > \"${fpath[1]}/_sqliosim\""),
    ]),
    ("sqliosim-man", &[
        ("Install every page:", "sudo sqliosim man --out /usr/local/share/man/man1"),
        ("Read the main page without installing it:", "sqliosim man | man -l -"),
    ]),
];

/// The examples of the page `name`, if it has any.
pub fn of(name: &str) -> Option<&'static [(&'static str, &'static str)]> {
    EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
}
