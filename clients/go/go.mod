module subsetting/clients/go

go 1.19
