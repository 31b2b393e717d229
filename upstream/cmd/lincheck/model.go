package main

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The operations the clients make on one key (a ConfigMap), as the API answers them.
type opKind int

const (
	opCreate opKind = iota
	opGet
	opUpdate // PUT with metadata.resourceVersion: a compare-and-set
	opDelete
)

func (k opKind) String() string {
	return [...]string{"create", "get", "update", "delete"}[k]
}

type input struct {
	Kind  opKind
	Key   string
	Value string // create, update: the value written (unique per write)
	RV    int64  // update: the resourceVersion the client read
}

type outcome int

const (
	outOK       outcome = iota // 200/201: for get, the object was found
	outNotFound                // 404
	outExists                  // 409 AlreadyExists (create)
	outConflict                // 409 Conflict (update)
	outUnknown                 // no answer (a timeout, a connection broken after the request was sent)
)

func (o outcome) String() string {
	return [...]string{"ok", "not-found", "exists", "conflict", "unknown"}[o]
}

type output struct {
	Outcome outcome
	Value   string // get: the value read
	RV      int64  // create, update, get: the object's resourceVersion in the answer
}

// The state of one key: a versioned register. RV is -1 when a write whose answer was lost may have
// made it (its revision is then unknown until a read shows it).
type register struct {
	Exists bool
	Value  string
	RV     int64
}

// A nondeterministic model: an operation whose outcome is unknown may or may not have taken
// effect; every other answer must be the one the register gives, and a write's new
// resourceVersion must be above the one it replaced (revisions only go up).
var registerModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(input).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys { // in first-seen order: deterministic
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{register{RV: 0}} },
	Step: func(s, in, out interface{}) []interface{} {
		return step(s.(register), in.(input), out.(output))
	},
	DescribeOperation: func(in, out interface{}) string {
		i, o := in.(input), out.(output)
		switch i.Kind {
		case opGet:
			return fmt.Sprintf("get(%s) -> %v %q rv=%d", i.Key, o.Outcome, o.Value, o.RV)
		case opUpdate:
			return fmt.Sprintf("update(%s, %q, rv=%d) -> %v rv=%d", i.Key, i.Value, i.RV, o.Outcome, o.RV)
		case opCreate:
			return fmt.Sprintf("create(%s, %q) -> %v rv=%d", i.Key, i.Value, o.Outcome, o.RV)
		default:
			return fmt.Sprintf("delete(%s) -> %v", i.Key, o.Outcome)
		}
	},
	DescribeState: func(s interface{}) string {
		r := s.(register)
		if !r.Exists {
			return "absent"
		}
		return fmt.Sprintf("%q rv=%d", r.Value, r.RV)
	},
}

// above: whether a new revision may follow the one known (unknown: anything).
func above(rv, known int64) bool { return known < 0 || rv > known }

func step(s register, in input, out output) []interface{} {
	if out.Outcome == outUnknown {
		// Taken effect or not: both are possible.
		next := []interface{}{s}
		switch in.Kind {
		case opCreate:
			if !s.Exists {
				next = append(next, register{Exists: true, Value: in.Value, RV: -1})
			}
		case opUpdate:
			if s.Exists && (s.RV < 0 || s.RV == in.RV) {
				next = append(next, register{Exists: true, Value: in.Value, RV: -1})
			}
		case opDelete:
			if s.Exists {
				next = append(next, register{RV: -1})
			}
		}
		return next
	}
	none := []interface{}{}
	switch in.Kind {
	case opCreate:
		switch out.Outcome {
		case outOK:
			if s.Exists || !above(out.RV, s.RV) {
				return none
			}
			return []interface{}{register{Exists: true, Value: in.Value, RV: out.RV}}
		case outExists:
			if !s.Exists {
				return none
			}
			return []interface{}{s}
		}
	case opGet:
		switch out.Outcome {
		case outOK:
			if !s.Exists || s.Value != out.Value || (s.RV >= 0 && s.RV != out.RV) {
				return none
			}
			return []interface{}{register{Exists: true, Value: s.Value, RV: out.RV}}
		case outNotFound:
			if s.Exists {
				return none
			}
			return []interface{}{s}
		}
	case opUpdate:
		switch out.Outcome {
		case outOK:
			if !s.Exists || (s.RV >= 0 && s.RV != in.RV) || out.RV <= in.RV {
				return none
			}
			return []interface{}{register{Exists: true, Value: in.Value, RV: out.RV}}
		case outConflict:
			if !s.Exists || s.RV == in.RV {
				return none
			}
			return []interface{}{s}
		case outNotFound:
			if s.Exists {
				return none
			}
			return []interface{}{s}
		}
	case opDelete:
		switch out.Outcome {
		case outOK:
			if !s.Exists {
				return none
			}
			return []interface{}{register{RV: -1}}
		case outNotFound:
			if s.Exists {
				return none
			}
			return []interface{}{s}
		}
	}
	return none
}
