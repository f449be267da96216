package continuous_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/perflab/perflab/continuous"
)

// A service starts profiling once, at the top of main, and mounts the
// on-demand wall-clock handler next to /debug/pprof.
func Example() {
	pyroscopeURL := fakePyroscope() // in a real service: "http://pyroscope:4040"

	stop, err := continuous.Start(continuous.Config{
		ApplicationName: "checkout",
		ServerAddress:   pyroscopeURL,
		Tags:            map[string]string{"region": "eu-west-1"},
		UploadRate:      time.Second, // the default, 15 s, suits a real service
		WallWindow:      300 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	mux := http.NewServeMux()
	mux.Handle("/debug/perflab/wall", continuous.Handler())

	// ... the service runs; `go tool pprof 'http://host/debug/perflab/wall?seconds=10'`
	// reads the handler, and Pyroscope shows the wall profile type.
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/perflab/wall?seconds=1")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Disposition"))
	// A real service just runs; the example waits for the first periodic
	// window to be uploaded (a loaded machine or -race can delay it past
	// the handler's second).
	for deadline := time.Now().Add(15 * time.Second); fakeIngested("wall") == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if err := stop(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wall-clock profiles uploaded:", fakeIngested("wall") > 0)
	// Output:
	// 200 OK attachment; filename="wall.pb.gz"
	// wall-clock profiles uploaded: true
}
