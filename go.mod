module github.com/acpclient/acp

go 1.26.0
