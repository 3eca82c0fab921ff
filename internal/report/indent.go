package report

import "bytes"

// appendIndented appends compact JSON (as encoding/json's Encoder and Marshal write it: no
// space outside strings) to dst, indented as json.Indent indents it with prefix and indent.
// It does what json.Indent does for such input at a fraction of its cost, which checks every
// byte with its scanner: a fleet's report is tens of megabytes (TestAppendIndented,
// FuzzAppendIndented).
func appendIndented(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end
		case '{', '[':
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				// Empty: {} and [] stay on their line.
				dst = append(dst, c, src[i+1])
				i += 2
				continue
			}
			dst = append(dst, c)
			depth++
			newline()
			i++
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
			i++
		case ',':
			dst = append(dst, c)
			newline()
			i++
		case ':':
			dst = append(dst, ':', ' ')
			i++
		default:
			// A number, true, false or null: up to the next structural character.
			end := i + 1
			for end < len(src) && !isStructural(src[end]) {
				end++
			}
			dst = append(dst, src[i:end]...)
			i = end
		}
	}
	return dst
}

// stringEnd returns the index after the closing quote of the string that starts at
// src[start], or len(src) when it is not closed.
func stringEnd(src []byte, start int) int {
	for i := start + 1; ; {
		j := bytes.IndexByte(src[i:], '"')
		if j < 0 {
			return len(src)
		}
		q := i + j
		backslashes := 0
		for k := q - 1; k > start && src[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

func isStructural(c byte) bool {
	switch c {
	case '"', '{', '}', '[', ']', ',', ':':
		return true
	}
	return false
}
