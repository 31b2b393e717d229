package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

func op(client int, call, ret int64, in input, out output) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func check(t *testing.T, h []porcupine.Operation) bool {
	t.Helper()
	return porcupine.CheckOperations(registerModel.ToModel(), h)
}

func TestASequentialHistoryOfTheRegisterIsLinearizable(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 1, input{Kind: opCreate, Key: "k", Value: "a"}, output{Outcome: outOK, RV: 10}),
		op(1, 2, 3, input{Kind: opGet, Key: "k"}, output{Outcome: outOK, Value: "a", RV: 10}),
		op(0, 4, 5, input{Kind: opUpdate, Key: "k", Value: "b", RV: 10}, output{Outcome: outOK, RV: 12}),
		op(1, 6, 7, input{Kind: opUpdate, Key: "k", Value: "c", RV: 10}, output{Outcome: outConflict}),
		op(1, 8, 9, input{Kind: opDelete, Key: "k"}, output{Outcome: outOK}),
		op(0, 10, 11, input{Kind: opGet, Key: "k"}, output{Outcome: outNotFound}),
		op(0, 12, 13, input{Kind: opCreate, Key: "k", Value: "d"}, output{Outcome: outOK, RV: 15}),
	}
	if !check(t, h) {
		t.Fatal("a sequential history of the register was refused")
	}
}

func TestAStaleReadAfterAnAcknowledgedWriteIsCaught(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 1, input{Kind: opCreate, Key: "k", Value: "a"}, output{Outcome: outOK, RV: 10}),
		op(0, 2, 3, input{Kind: opUpdate, Key: "k", Value: "b", RV: 10}, output{Outcome: outOK, RV: 11}),
		op(1, 4, 5, input{Kind: opGet, Key: "k"}, output{Outcome: outOK, Value: "a", RV: 10}),
	}
	if check(t, h) {
		t.Fatal("a read of the value before an acknowledged write was accepted")
	}
}

func TestAWriteWithAnUnknownOutcomeMayOrMayNotHaveHappened(t *testing.T) {
	lost := op(0, 2, 1<<62, input{Kind: opUpdate, Key: "k", Value: "b", RV: 10}, output{Outcome: outUnknown})
	create := op(0, 0, 1, input{Kind: opCreate, Key: "k", Value: "a"}, output{Outcome: outOK, RV: 10})
	for _, read := range []output{{Outcome: outOK, Value: "a", RV: 10}, {Outcome: outOK, Value: "b", RV: 13}} {
		h := []porcupine.Operation{create, lost, op(1, 5, 6, input{Kind: opGet, Key: "k"}, read)}
		if !check(t, h) {
			t.Fatalf("reading %q after a write of unknown outcome was refused", read.Value)
		}
	}
	// But not a value never written.
	h := []porcupine.Operation{create, lost, op(1, 5, 6, input{Kind: opGet, Key: "k"}, output{Outcome: outOK, Value: "z", RV: 13})}
	if check(t, h) {
		t.Fatal("a value never written was accepted")
	}
}

func TestRevisionsOnlyGoUp(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 1, input{Kind: opCreate, Key: "k", Value: "a"}, output{Outcome: outOK, RV: 10}),
		op(0, 2, 3, input{Kind: opUpdate, Key: "k", Value: "b", RV: 10}, output{Outcome: outOK, RV: 9}),
	}
	if check(t, h) {
		t.Fatal("an update answered with an older resourceVersion was accepted")
	}
}

func TestTheWatchCheckFindsAMissedAndAnInventedEvent(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 1, input{Kind: opCreate, Key: "k", Value: "a"}, output{Outcome: outOK, RV: 10}),
		op(0, 2, 3, input{Kind: opUpdate, Key: "k", Value: "b", RV: 10}, output{Outcome: outOK, RV: 11}),
		op(0, 4, 5, input{Kind: opUpdate, Key: "k", Value: "c", RV: 11}, output{Outcome: outOK, RV: 12}),
	}
	good := []watchEvent{{"ADDED", "k", "a", 10}, {"MODIFIED", "k", "b", 11}, {"MODIFIED", "k", "c", 12}}
	if p := checkWatch(good, nil, 5, h); len(p) != 0 {
		t.Fatalf("a faithful watch was faulted: %v", p)
	}
	missed := []watchEvent{{"ADDED", "k", "a", 10}, {"MODIFIED", "k", "c", 12}}
	if p := checkWatch(missed, nil, 5, h); len(p) != 1 {
		t.Fatalf("want the missed event reported, got %v", p)
	}
	if p := checkWatch(missed, [][2]int64{{10, 11}}, 5, h); len(p) != 0 {
		t.Fatalf("an event inside a gap (410) is not required: %v", p)
	}
	invented := append(good, watchEvent{"MODIFIED", "k", "x", 13})
	if p := checkWatch(invented, nil, 5, h); len(p) != 1 {
		t.Fatalf("want the invented event reported, got %v", p)
	}
	disordered := []watchEvent{{"ADDED", "k", "a", 10}, {"MODIFIED", "k", "c", 12}, {"MODIFIED", "k", "b", 11}}
	if p := checkWatch(disordered, nil, 5, h); len(p) == 0 {
		t.Fatal("events out of revision order were accepted")
	}
}
