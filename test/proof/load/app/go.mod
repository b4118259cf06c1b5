module gracegate.dev/load-app

go 1.22
