package merge

import (
	"fmt"
)

// The bounds of what one merge reads. Decoding turns each JSON object and each element of an
// array into a struct or a slice element of up to some 200 bytes, so the memory a merge takes
// follows the count of these values more than the bytes: 9 MB of {} in a report's results
// decoded into 1.5 GiB of heap (3 GiB allocated). A report of app-status holds one object per
// 200 bytes or more (a cluster of 200 objects: about 50 KB and 203 values, TestLimitsFitReports),
// a document built to weigh one per 3 bytes. So a report is scanned before it is decoded,
// without allocating, and refused when it holds more objects than its size allows
// (bytesPerObject), nests deeper than a report does (maxDepth), or takes the reports past
// MaxTotalBytes or MaxValues together.
const (
	// MaxTotalBytes bounds the reports of one merge together: about 36,000 clusters of 200
	// objects, merged in about 3 GiB of memory (reports of app-status take about one and a half
	// times their size). It bounds the memory of a merge only with MaxValues.
	MaxTotalBytes int64 = 2 << 30
	// MaxValues bounds the JSON objects and array elements of the reports of one merge
	// together: about 40,000 clusters of 200 objects. It is what bounds a merge's memory: some
	// 600 bytes of heap per value at the peak, outputs included, at the density bytesPerObject
	// allows (about 12 times the report's size), so at most about 5 GiB whatever the reports
	// hold (TestMergePeakMemory in internal/cli).
	MaxValues int64 = 8 << 20
	// bytesPerObject is the fewest bytes a report has per JSON object (or element of an array
	// that is not a string): a report of app-status has 200 and more.
	bytesPerObject = 48
	// maxDepth is the deepest a report nests (a failure's event, in an object, in a cluster,
	// in the results, in the run, is 5 levels).
	maxDepth = 32
)

// TotalHint is what to do about reports that together hold more than a merge reads.
const TotalHint = "check that the folder holds the reports of this run alone; a fleet that large is better verified without workloads (workloads: false, --workloads=false), whose reports leave each cluster's objects out, or as several runs, each merged apart"

// Limits is what the reports of one merge may still hold, in bytes and in JSON values; each
// report parsed within them takes its share.
type Limits struct {
	bytes, values int64
}

// NewLimits are the limits of one merge: MaxTotalBytes and MaxValues.
func NewLimits() *Limits { return &Limits{bytes: MaxTotalBytes, values: MaxValues} }

// ReadLimit is the most the next report may have: MaxReportBytes, or what is left of
// MaxTotalBytes when that is less.
func (l *Limits) ReadLimit() int64 { return max(0, min(MaxReportBytes, l.bytes)) }

// Parse is the package's Parse within the limits: a report that would take them past their
// bound, or that holds more JSON values than its size allows, is refused before it is
// decoded, saying which bound and what to do.
func (l *Limits) Parse(path string, data []byte) (Report, error) {
	size := int64(len(data))
	if size > l.bytes {
		return Report{}, fmt.Errorf("%s: the reports hold more than the %d MiB a merge reads in all: %s", path, MaxTotalBytes>>20, TotalHint)
	}
	s, err := scan(data)
	switch {
	case err != nil:
		return Report{}, fmt.Errorf("%s is not a report of app-status: %w", path, err)
	case s.objects > size/bytesPerObject+64:
		return Report{}, fmt.Errorf("%s is not a report of app-status: it holds %d JSON objects (and non-string array elements) in %d bytes, more than one per %d bytes, where a report has one per 200 or more: check what wrote it", path, s.objects, size, bytesPerObject)
	case s.values > l.values:
		return Report{}, fmt.Errorf("%s: the reports hold more than the %d JSON values (objects and array elements) a merge decodes in all, about 40,000 clusters of 200 objects: %s", path, MaxValues, TotalHint)
	}
	r, err := parse(path, data)
	if err != nil {
		return Report{}, err
	}
	l.bytes -= size
	l.values -= s.values
	return r, nil
}

// shape is what a JSON document decodes into, counted: its objects and the elements of its
// arrays that are not strings (objects), and every object and array element (values).
type shape struct {
	objects, values int64
}

// scan counts what data decodes into, in one pass that allocates nothing. It does not check
// that data is JSON (the decoder does, after); it refuses a document nested deeper than
// maxDepth.
func scan(data []byte) (shape, error) {
	var s shape
	stack := make([]byte, 0, maxDepth) // the open containers, '{' or '['
	top := func() byte {
		if len(stack) == 0 {
			return 0
		}
		return stack[len(stack)-1]
	}
	element := false // the next value is an element of the array on top of the stack
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case ' ', '\t', '\n', '\r', ':':
			continue
		case ',':
			element = top() == '['
			continue
		case ']', '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			element = false
			continue
		}
		// A value starts here.
		if element {
			s.values++
			if c != '"' && c != '{' {
				s.objects++ // a number, a literal or an array where a struct may be decoded
			}
		}
		element = false
		switch c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if c == '{' {
				s.objects++
				if top() != '[' {
					s.values++ // an element of an array is counted above
				}
			}
			if len(stack) == maxDepth {
				return s, fmt.Errorf("its JSON nests deeper than %d levels, and a report nests 5", maxDepth)
			}
			stack = append(stack, c)
			element = c == '['
		default:
			// A number or a literal: up to the next delimiter.
			for i+1 < len(data) && !isDelimiter(data[i+1]) {
				i++
			}
		}
	}
	return s, nil
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', ']', '}', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
		return true
	}
	return false
}
