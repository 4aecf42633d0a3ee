//! The campaign report's JSON and HTML: the JSON carries the campaign's fields, every row with
//! its figures and the verdict; the page escapes every value from the files.

use serde_json::json;

use super::support::*;

#[test]
fn the_json_carries_the_campaign_rows_and_verdict() {
    let dir = all_clean(&["node1", "node2"], 2);
    make_corrupt(dir.path(), "node2", 1, &["torn_write"]);
    let (ran, _, doc, _) = report_all(dir.path());
    assert_eq!(ran.code, Some(1), "{}", ran.both());
    assert_eq!(doc["schema"], json!("sqliosim-campaign-report/1"));
    assert_eq!(doc["campaign"]["cycles"], json!(2));
    assert_eq!(doc["campaign"]["hosts"], json!(["node1", "node2"]));
    assert_eq!(doc["campaign"]["witness"], json!("10.0.0.1:7000"));
    assert_eq!(doc["campaign"]["started_us"], json!(STARTED_US));
    assert_eq!(doc["exit_code"], json!(1));
    assert!(doc["verdict"].as_str().unwrap().contains("node2 cycle 1"));
    assert_eq!(doc["totals"]["corrupt"], json!(1));
    assert_eq!(doc["totals"]["clean"], json!(3));
    let row = &doc["rows"][0];
    assert_eq!(row["verdict"], json!("CLEAN"));
    assert_eq!(row["in_flight"], json!(13));
    assert_eq!(row["pages_owed"], json!(800));
    assert_eq!(row["acked_unwitnessed"], json!({"batches": 3, "pages": 7}));
    assert_eq!(
        row["unsafe_shutdowns"],
        json!([{"device": "/dev/nvme0n1", "before": 17, "after": 18}])
    );
    assert_eq!(row["cut"]["cut_at_us"], json!(STARTED_US + 600_000_000));
    assert_eq!(doc["rows"][2]["torn"], json!(1));
}

#[test]
fn the_page_escapes_host_names_and_marks_each_cycle() {
    let host = "<img src=x onerror=alert(1)>&";
    let dir = all_clean(&[host, "node2"], 2);
    make_corrupt(dir.path(), "node2", 2, &["lost_write"]);
    let (ran, _, _, html) = report_all(dir.path());
    assert_eq!(ran.code, Some(1), "{}", ran.both());
    assert!(!html.contains("<img"), "the host name is escaped");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;"));
    assert!(
        html.contains("<td class='corrupt'>CORRUPT</td>"),
        "the grid marks the cycle"
    );
    assert!(html.contains("class='verdict fail'"));
}
