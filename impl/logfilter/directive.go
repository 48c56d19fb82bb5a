package logfilter

import (
	"log/slog"
	"strings"
)

// Field is one field matcher of a span directive, written {name=value}: a
// span matches it when one of its fields has that name and a value whose
// text (slog.Value.String of the resolved value) is exactly Value.
type Field struct {
	Name  string
	Value string
}

// Directive is one parsed segment of a directive list.
//
// A directive with neither Span nor Fields is static: it applies to events
// by their target. Otherwise it is dynamic: it applies to spans (by the
// span's target, name and fields), and enables Level for every event logged
// inside a matching span and inside the spans entered within it, whatever
// the event's target.
type Directive struct {
	// Target is the target the directive covers (with the targets below it
	// at a "::" boundary); empty means every target.
	Target string
	// Span is the span name a dynamic directive requires; empty means any
	// span (a directive like [{peer=a}] then matches by fields alone).
	Span string
	// Fields are the field matchers of a dynamic directive, all of which
	// must match.
	Fields []Field
	// Level is the least severe slog level the directive enables, or
	// LevelOff for "off".
	Level slog.Level
}

// Dynamic reports whether the directive names a span or fields, which only
// the span-aware filter understands.
func (d Directive) Dynamic() bool { return d.Span != "" || len(d.Fields) > 0 }

// String returns the directive in canonical syntax: lower-case level names,
// an explicit level, no whitespace around names. Parse reads it back as the
// same directive.
func (d Directive) String() string {
	var b strings.Builder
	d.write(&b)
	return b.String()
}

func (d Directive) write(b *strings.Builder) {
	if d.Target == "" && !d.Dynamic() {
		b.WriteString(levelName(d.Level))
		return
	}
	b.WriteString(d.Target)
	if d.Dynamic() {
		b.WriteByte('[')
		b.WriteString(d.Span)
		if len(d.Fields) > 0 {
			b.WriteByte('{')
			for i, f := range d.Fields {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(f.Name)
				b.WriteByte('=')
				b.WriteString(f.Value)
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
	}
	b.WriteByte('=')
	b.WriteString(levelName(d.Level))
}

// Directives is a parsed directive list, in the order of the list.
type Directives []Directive

// String returns the list in canonical syntax, segments joined by ",".
func (ds Directives) String() string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte(',')
		}
		d.write(&b)
	}
	return b.String()
}
