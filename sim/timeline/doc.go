// Package timeline renders one self-contained HTML page for a recorded run
// (record.Record). A person opens it next to a failing seed's interleaving
// table to see the run as time flows. It has one lane per task that did
// something (grouped by pod when task names carry a pod prefix, such as
// "pod1/reader" or "pod1-reader"), plus a lane for the world (Task -1) and
// one per bus subscriber the world delivered to. Lock holds and waits show
// as bars, client operations and database statements as intervals, and bus
// messages as arrows from the send to each receive (a lost one as a broken
// red arrow ending in ×). Faults and notes show as markers. Every event a
// check blamed is outlined in red with what it said, its operation's
// interval drawn as a band across all lanes.
//
// The page needs no network: its CSS and JavaScript are inline, built from
// the files in assets/. Everything is laid out in Go, so the page reads
// without JavaScript too. The script only switches the axis (and the
// caption that describes it) and fills the details panel when a bar or
// marker is clicked. It also opens the page on the violating read (the
// blamed answer stale the longest; else the first blamed event), zoomed out
// if need be so that the read and the claim's window (Page.Window, the bound
// from the claims table) are in view. The window is a band from the moment
// the read's value stopped being current (the blamed commit before it) to
// the bound, and the read's stale interval a strip on its lane against it.
// When the script has run it sets data-rendered="1" on the root element,
// and the boxes of the read and the window on screen (data-box-read, …),
// which the browser test checks.
//
// Two axes: virtual time since sim.Epoch, or event order (x = the event's
// place in the record). A cache hit takes no virtual time, so many events
// often share one instant; the page picks event order when most events
// would sit on top of each other on a time axis, says why, and offers a
// toggle.
//
// The page is bounded (about 20,000 drawn elements): a larger record is
// drawn around its blamed events and its end (where the failure is), and
// the page says how many events were left out. The output is a function of
// the Page only: the same Page gives byte-identical HTML.
//
// TestPageRendersInChromium loads a page in headless Chromium, checks the
// DOM after the script ran and saves a screenshot (in WINDTUNNEL_ARTIFACTS,
// else out/artifacts/timeline); it skips where no Chromium is installed.
// `make browser-test` runs it through browser.sh, which installs Debian's
// chromium package first if need be.
//
//	err := timeline.WriteFile("timeline.html", timeline.Page{
//		Title:    "TestOC2_StaleRead seed 0x5eed (shrunk)",
//		Failure:  res.Err.Error(),
//		Record:   res.Record,
//		Commands: []string{"go test ./scenarios/oc -run ... -sim.seed=0x5eed"},
//		Links:    []timeline.Link{{Text: "porcupine visualization", Href: "porcupine.html"}},
//	})
package timeline
