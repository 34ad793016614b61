from tests.workshop.truth.run import main

main()
