module subsetting

go 1.19
