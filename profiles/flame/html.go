package flame

import (
	"bytes"
	_ "embed"
	"html/template"
	"io"
)

// Script is the interactive viewer's JavaScript. It defines
// PerflabFlame.mount(element, data), where data is the parsed output of
// Tree.WriteJSON. The web UI serves it with Style to embed flame graphs in
// its own pages.
//
//go:embed flame.js
var Script string

// Style is the viewer's CSS; its classes all start with "pf".
//
//go:embed flame.css
var Style string

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// WriteHTML writes the tree as one self-contained HTML page: the viewer's
// script and style inline and the compact JSON in a <script
// type="application/json"> element, drawn on a canvas. Click zooms, the
// search box highlights matching frames and shows their share, the legend
// toggles category highlights, "Icicle" inverts the graph and shift-click
// or right-click focuses on a function (its callers above, callees below).
func (t *Tree) WriteHTML(w io.Writer) error {
	// The page is rendered around a marker where the JSON goes, and the
	// JSON streamed into its place: the graph is never held whole.
	var page bytes.Buffer
	err := pageTemplate.Execute(&page, struct {
		Title  string
		Style  template.CSS
		Script template.JS
		Data   template.JS
	}{cutName(t.opts.Title, 4*MaxNameRunes), template.CSS(Style), template.JS(Script), template.JS(dataMarker)})
	if err != nil {
		return err
	}
	head, tail, ok := bytes.Cut(page.Bytes(), []byte(dataMarker))
	if !ok {
		panic("flame: page.html has no {{.Data}}")
	}
	bw := &budgetWriter{w: w, limit: t.maxOutput(), what: "HTML page"}
	if _, err := bw.Write(head); err != nil {
		return err
	}
	// The JSON is inserted as is: WriteJSON escapes <, > and & inside
	// strings and writes nothing else that HTML could read as markup, which
	// TestHostileNames checks.
	if err := t.WriteJSON(bw); err != nil {
		return err
	}
	_, err = bw.Write(tail)
	return err
}

// dataMarker stands for the JSON in the rendered page; no title can
// produce it, since html/template escapes the NUL bytes.
const dataMarker = "\x00perflab-flame-data\x00"
