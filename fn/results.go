package fn

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Result is one result of a run and where the object it is about was read
// (zero for the run as a whole), from the moment it is made: a
// ResourceList carries the first part, the line on stderr names both.
type Result struct {
	framework.Result
	Origin Origin
}

// String is the result as one line of free text for stderr: severity, where
// the object was read, the object, the field and the message. kustomize
// shows a function's stderr, not its results.
func (r *Result) String() string {
	parts := []string{string(r.Severity)}
	if where := r.Origin.String(); where != "" {
		parts = append(parts, where)
	} else if r.File != nil && r.File.Path != "" {
		parts = append(parts, r.File.Path)
	}
	if ref := r.ResourceRef; ref != nil {
		parts = append(parts, describeRef(ref))
	}
	if r.Field != nil && r.Field.Path != "" {
		parts = append(parts, r.Field.Path)
	}
	parts = append(parts, r.Message)
	return strings.Join(parts, ": ")
}

// Describe names an object for a message, as far as it can be named: "FLApp
// ns/name", "ConfigMap a", or "the object".
func Describe(node *yaml.RNode) string {
	if ref := refOf(node); ref != nil && (ref.Kind != "" || ref.Name != "") {
		return describeRef(ref)
	}
	return "the object"
}

func describeRef(ref *yaml.ResourceIdentifier) string {
	name := ref.Name
	if ref.Namespace != "" {
		name = ref.Namespace + "/" + ref.Name
	}
	return strings.TrimSpace(ref.Kind + " " + name)
}

// Results are a run's results.
type Results []*Result

// ExitCode is 1 when any result is an error, as framework.Results says.
func (rs Results) ExitCode() int {
	if rs.Count(framework.Error) > 0 {
		return 1
	}
	return 0
}

// Count is how many results have the severity.
func (rs Results) Count(severity framework.Severity) int {
	n := 0
	for _, r := range rs {
		if r.Severity == severity {
			n++
		}
	}
	return n
}

// Sort puts the results in kyaml's order (framework.Results.Sort), which
// decides each comparison.
func (rs Results) Sort() {
	sort.SliceStable(rs, func(i, j int) bool {
		pair := framework.Results{&rs[j].Result, &rs[i].Result}
		pair.Sort()
		return pair[0] == &rs[i].Result
	})
}

// Framework is the results as a ResourceList carries them.
func (rs Results) Framework() framework.Results {
	out := make(framework.Results, len(rs))
	for i, r := range rs {
		out[i] = &r.Result
	}
	return out
}

// Error is the results' errors, one line each.
func (rs Results) Error() string {
	var lines []string
	for _, r := range rs {
		if r.Severity == framework.Error {
			lines = append(lines, r.String())
		}
	}
	return strings.Join(lines, "\n")
}

// InputError is a problem with the input at Origin: the one error a reader
// returns about where it read. A run reports it as an error result.
type InputError struct {
	Origin Origin
	Err    error
}

func (e *InputError) Error() string {
	if where := e.Origin.String(); where != "" {
		return where + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// ErrorResults is how a run reports err: Results returned as an error (a
// functionConfig that does not parse, a kustomization's build refused, an
// entry's run inside one) as they are, an InputError's message at its
// origin, or any other error about the run as a whole.
func ErrorResults(err error) Results {
	var failed Results
	if errors.As(err, &failed) {
		return failed
	}
	var input *InputError
	if errors.As(err, &input) {
		return Results{bound(&Result{Result: framework.Result{Severity: framework.Error, File: fileOf(input.Origin), Message: input.Err.Error()}, Origin: input.Origin})}
	}
	return Results{RunError(err.Error())}
}

// The results this function reports, built only here.

// RunError is an error about the run as a whole, not one object: the input
// could not be read, or a ceiling was passed.
func RunError(msg string) *Result {
	return bound(&Result{Result: framework.Result{Severity: framework.Error, Message: msg}})
}

// objectError is an error about the object read at o, at the field
// fieldPath (if not empty), whose value was value (if not nil).
func objectError(o Origin, ref *yaml.ResourceIdentifier, fieldPath string, value any, msg string) *Result {
	r := &Result{Result: framework.Result{Severity: framework.Error, ResourceRef: copyRef(ref), File: fileOf(o), Message: msg}, Origin: o}
	if fieldPath != "" {
		r.Field = &framework.Field{Path: fieldPath, CurrentValue: value}
	}
	return bound(r)
}

// itemError is an error about an item that is not a well-formed
// Kubernetes object: without a file (a ResourceList item kpt did not
// annotate), its place in the list starts the message, since nothing else
// in the result can say which item it is.
func itemError(o Origin, ref *yaml.ResourceIdentifier, fieldPath, msg string) *Result {
	if o.File == "" {
		msg = o.String() + ": " + msg
	}
	return objectError(o, ref, fieldPath, nil, msg)
}

// validationError is one of render's validation errors about an FLApp.
func validationError(f *flapp, e *field.Error) *Result {
	short := *e
	if v, ok := e.BadValue.(string); ok {
		short.BadValue = shorten(v, MaxValue)
	}
	var value any
	switch v := short.BadValue.(type) {
	case string, int32, int64, int:
		value = v
	}
	return objectError(f.origin, f.ref, shorten(e.Field, MaxValue), value, short.ErrorBody())
}

// configError is an error in the functionConfig read at o, at the setting
// path.
func configError(o Origin, node *yaml.RNode, path, msg string) *Result {
	return objectError(o, refOf(node), path, nil, "functionConfig: "+msg)
}

// flappInfo is a note about what was done for an FLApp.
func flappInfo(f *flapp, msg string) *Result {
	return bound(&Result{Result: framework.Result{Severity: framework.Info, ResourceRef: copyRef(f.ref), File: fileOf(f.origin), Message: msg}, Origin: f.origin})
}

// pruneNote says why a Service generated by an earlier run was dropped.
func pruneNote(svc *previousService, key objectKey, reason string) *Result {
	return bound(&Result{Result: framework.Result{
		Severity: framework.Info, ResourceRef: copyRef(svc.ref), File: fileOf(svc.origin),
		Message: "pruned Service " + key.String() + ": " + reason,
	}, Origin: svc.origin})
}

// pairWarning is a warning about a follower FLApp, at fieldPath, whose
// paired replicas do not match its leader's.
func pairWarning(follower *flapp, fieldPath, msg string) *Result {
	return bound(&Result{Result: framework.Result{Severity: framework.Warning, ResourceRef: copyRef(follower.ref), File: fileOf(follower.origin),
		Field: &framework.Field{Path: fieldPath}, Message: msg}, Origin: follower.origin})
}

// BuildProblem is an error about a kustomization a render builds: what the
// build must not do (execute, fetch, leave the repository) or a ceiling it
// would pass, at field (transformers[0]; "" for the file itself) of the
// last kustomization of chain (the root's first, each other as the one
// before refers to it).
func BuildProblem(chain []string, field, msg string) *Result {
	r := &Result{Result: framework.Result{Severity: framework.Error, Message: msg}, Origin: Origin{Chain: chain}}
	if field != "" {
		r.Field = &framework.Field{Path: field}
	}
	return bound(r)
}

// moreErrors is the one line that stands for the errors past MaxErrors.
func moreErrors(n int) *Result {
	return RunError(fmt.Sprintf("%d more errors not shown (the first %d are)", n, MaxErrors))
}

// runInfo is a note about the run as a whole.
func runInfo(msg string) *Result {
	return bound(&Result{Result: framework.Result{Severity: framework.Info, Message: msg}})
}

// What a result may echo of its input: a 4 MB name must not come back
// several times over in the ResourceList, on stderr and in a CI log.
const (
	MaxValue   = 256  // a name, a file, a field value
	MaxMessage = 4096 // a whole message
)

// bound shortens whatever a result echoes of its input.
func bound(r *Result) *Result {
	r.Message = shorten(r.Message, MaxMessage)
	if ref := r.ResourceRef; ref != nil {
		ref.Name, ref.Namespace = shorten(ref.Name, MaxValue), shorten(ref.Namespace, MaxValue)
		ref.APIVersion, ref.Kind = shorten(ref.APIVersion, MaxValue), shorten(ref.Kind, MaxValue)
	}
	if r.File != nil {
		r.File.Path = shorten(r.File.Path, MaxValue)
	}
	if r.Field != nil {
		r.Field.Path = shorten(r.Field.Path, MaxValue)
		if v, ok := r.Field.CurrentValue.(string); ok {
			r.Field.CurrentValue = shorten(v, MaxValue)
		}
	}
	return r
}

// shorten cuts s to about n bytes, on a rune boundary, saying how long it was.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + fmt.Sprintf("... (%d bytes in all)", len(s))
}

// fileOf is the file a result names: the object's file, without the
// document (the index a kpt result would carry is the object's index
// annotation, which kpt reads itself).
func fileOf(o Origin) *framework.File {
	if o.File == "" {
		return nil
	}
	return &framework.File{Path: o.File}
}

func onlyErrors(results Results) Results {
	var errs Results
	for _, r := range results {
		if r.Severity == framework.Error {
			errs = append(errs, r)
		}
	}
	return errs
}

// copyRef gives each result its own reference: bound shortens it in place.
func copyRef(ref *yaml.ResourceIdentifier) *yaml.ResourceIdentifier {
	if ref == nil {
		return nil
	}
	c := *ref
	return &c
}
