from pipelines.truth.run import main

main()
