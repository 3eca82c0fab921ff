package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// durationForms is how an error names the forms every duration input and flag takes.
const durationForms = "give seconds or a duration with its unit, e.g. 600, 90s, 10m or 1h30m"

// parseDuration reads a duration input or flag, the one syntax of them all: a bare whole
// number is seconds (600), anything else a Go duration (600s, 10m, 1h30m). Its errors name
// neither the input nor the flag: the caller does. It checks no range but what a
// time.Duration holds; the settings check theirs (request).
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || isRangeError(err) {
		// Whole seconds; checked before they are multiplied, which could overflow.
		if err != nil || secs < 0 || secs > int64(maxDuration/time.Second) {
			return 0, fmt.Errorf("%s seconds is out of range: give a duration up to 24h, e.g. 600, 90s or 10m", v)
		}
		return time.Duration(secs) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		if strings.Contains(err.Error(), "invalid duration") && durationShape.MatchString(v) {
			return 0, fmt.Errorf("%q is out of range: give a duration up to 24h, e.g. 600, 90s or 10m", v)
		}
		return 0, fmt.Errorf("%q is not a duration: %s", v, durationForms)
	}
	return d, nil
}

// durationShape is a duration as ParseDuration reads it, whose only fault can be its size.
var durationShape = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$`)

func isRangeError(err error) bool {
	var numErr *strconv.NumError
	return errors.As(err, &numErr) && errors.Is(numErr.Err, strconv.ErrRange)
}

// durationFlag is a duration flag read as the inputs are (parseDuration): --timeout 600 is
// ten minutes, as --timeout 10m.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

// Type names the value in the help.
func (durationFlag) Type() string { return "duration" }

func (f durationFlag) Set(v string) error {
	d, err := parseDuration(v)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}
