package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

type watchEvent struct {
	Type  string // ADDED, MODIFIED, DELETED
	Key   string
	Value string
	RV    int64
}

// watcher follows the namespace's ConfigMaps from a revision as an informer does: a stream that
// ends is resumed from the last event's revision; a 410 Gone (the server no longer holds that
// history) is a gap, recorded, after which it lists again and watches from the list's revision.
type watcher struct {
	c      *apiClient
	mu     sync.Mutex
	events []watchEvent
	gaps   [][2]int64 // (from, to]: revisions the watch could not see
	errs   []string
}

func (w *watcher) run(ctx context.Context, from int64) {
	rv := from
	for ctx.Err() == nil {
		next, gone, err := w.stream(ctx, rv)
		if gone {
			listRV, lerr := w.listRV()
			if lerr != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			w.mu.Lock()
			w.gaps = append(w.gaps, [2]int64{rv, listRV})
			w.mu.Unlock()
			rv = listRV
			continue
		}
		if next > rv {
			rv = next
		}
		if err != nil && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (w *watcher) listRV() (int64, error) {
	code, data, err := w.c.do("GET", w.c.collection()+"?limit=1", nil)
	if err != nil || code != 200 {
		return 0, fmt.Errorf("list: %d %v", code, err)
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return 0, err
	}
	return strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
}

// stream reads one watch request's events; returns the last revision seen.
func (w *watcher) stream(ctx context.Context, rv int64) (int64, bool, error) {
	url := fmt.Sprintf("%s%s?watch=true&allowWatchBookmarks=true&resourceVersion=%d&timeoutSeconds=30", w.c.ep.URL, w.c.collection(), rv)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return rv, false, err
	}
	if w.c.ep.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.c.ep.Token)
	}
	req.Header.Set("Accept", "application/json")
	client := &http.Client{Transport: w.c.http.Transport}
	resp, err := client.Do(req)
	if err != nil {
		return rv, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == 410 {
		return rv, true, nil
	}
	if resp.StatusCode != 200 {
		return rv, false, fmt.Errorf("watch: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return rv, false, err
		}
		if ev.Type == "ERROR" {
			var st struct {
				Code int `json:"code"`
			}
			_ = json.Unmarshal(ev.Object, &st)
			return rv, st.Code == 410, nil
		}
		cm, erv, err := decodeCM(ev.Object)
		if err != nil {
			return rv, false, err
		}
		if erv > rv {
			rv = erv
		}
		if ev.Type == "BOOKMARK" {
			continue
		}
		w.mu.Lock()
		w.events = append(w.events, watchEvent{Type: ev.Type, Key: cm.Metadata.Name, Value: cm.Data["v"], RV: erv})
		w.mu.Unlock()
	}
	return rv, false, sc.Err()
}

// checkWatch holds the watch's events against the history of one run:
//   - their revisions go strictly up;
//   - every event is a write of the history (its key and value; an acknowledged write's
//     revision), none invented;
//   - every acknowledged create and update after the watch began, outside a gap, was seen.
func checkWatch(events []watchEvent, gaps [][2]int64, from int64, history []porcupine.Operation) []string {
	var problems []string
	type write struct {
		rv    int64
		acked bool
		kind  opKind
	}
	writes := map[string][]write{} // by key+value
	for _, op := range history {
		in, out := op.Input.(input), op.Output.(output)
		if in.Kind != opCreate && in.Kind != opUpdate && in.Kind != opDelete {
			continue
		}
		if out.Outcome != outOK && out.Outcome != outUnknown {
			continue
		}
		k := in.Key + "\x00" + in.Value
		if in.Kind == opDelete {
			k = in.Key + "\x00<deleted>"
		}
		writes[k] = append(writes[k], write{rv: out.RV, acked: out.Outcome == outOK, kind: in.Kind})
	}
	seen := map[int64]watchEvent{}
	var last int64
	for i, e := range events {
		if e.RV <= last {
			problems = append(problems, fmt.Sprintf("watch event %d (%s %s rv=%d) after rv=%d: revisions out of order", i, e.Type, e.Key, e.RV, last))
		}
		last = e.RV
		seen[e.RV] = e
		k := e.Key + "\x00" + e.Value
		if e.Type == "DELETED" {
			k = e.Key + "\x00<deleted>"
		}
		ws, ok := writes[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("watch event %s %s %q rv=%d matches no write of the history", e.Type, e.Key, e.Value, e.RV))
			continue
		}
		if e.Type != "DELETED" {
			match := false
			for _, w := range ws {
				if !w.acked || w.rv == e.RV {
					match = true
				}
			}
			if !match {
				problems = append(problems, fmt.Sprintf("watch event %s %s %q at rv=%d, but the write was acknowledged at another revision", e.Type, e.Key, e.Value, e.RV))
			}
		}
	}
	inGap := func(rv int64) bool {
		for _, g := range gaps {
			if rv > g[0] && rv <= g[1] {
				return true
			}
		}
		return false
	}
	for _, op := range history {
		in, out := op.Input.(input), op.Output.(output)
		if (in.Kind != opCreate && in.Kind != opUpdate) || out.Outcome != outOK || out.RV <= from || inGap(out.RV) {
			continue
		}
		if out.RV > last {
			continue // after the watch's last event: not yet delivered when the run ended
		}
		if e, ok := seen[out.RV]; !ok || e.Key != in.Key || e.Value != in.Value {
			problems = append(problems, fmt.Sprintf("the watch missed %v %s %q acknowledged at rv=%d", in.Kind, in.Key, in.Value, out.RV))
		}
	}
	return problems
}
